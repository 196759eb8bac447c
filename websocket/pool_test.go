package websocket_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// wpConn is what a pooled server connection's callbacks saw.
type wpConn struct {
	busy   atomic.Int32
	n      int // messages, in order
	bad    string
	opened bool
}

// wpServer echoes on a Pool, checking that a connection's callbacks never
// overlap, that OnOpen comes first and that numbered messages come in
// order; block, if set, runs before each echo.
type wpServer struct {
	quiet  bool // no echo
	block  func(c *websocket.Conn, msg string)
	closed chan *wpConn
	errs   chan error
}

func newWPServer() *wpServer {
	return &wpServer{closed: make(chan *wpConn, 64), errs: make(chan error, 64)}
}

func (s *wpServer) enter(c *websocket.Conn) *wpConn {
	st, _ := c.Context().(*wpConn)
	if st != nil && st.busy.Add(1) != 1 && st.bad == "" {
		st.bad = "two callbacks at once"
	}
	return st
}

func (s *wpServer) OnOpen(c *websocket.Conn) {
	st := &wpConn{opened: true}
	c.SetContext(st)
	s.enter(c)
	st.busy.Add(-1)
}

func (s *wpServer) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	st := s.enter(c)
	if st == nil {
		return
	}
	defer st.busy.Add(-1)
	msg := string(data)
	if s.block != nil {
		s.block(c, msg)
	}
	if msg == "boom" {
		panic("boom")
	}
	if n, err := strconv.Atoi(strings.TrimSpace(msg)); err == nil && n != st.n && st.bad == "" {
		st.bad = fmt.Sprintf("message %d came as number %d", n, st.n)
	}
	st.n++
	if !s.quiet {
		c.WriteMessage(typ, data)
	}
}

func (s *wpServer) OnClose(c *websocket.Conn, err error) {
	st := s.enter(c)
	if st != nil {
		st.busy.Add(-1)
	}
	s.closed <- st
	s.errs <- err
}

// wpServe serves s on a pool of o, closed at cleanup after the server.
func wpServe(t *testing.T, s *wpServer, o engine.PoolOptions) (string, *websocket.Upgrader) {
	t.Helper()
	p := engine.NewPool(o)
	t.Cleanup(p.Close)
	u := &websocket.Upgrader{Options: websocket.Options{Handler: s, Pool: p}}
	return serveWSLoops(t, u, false, 1), u
}

// wpClient counts the echoes it gets and checks they come in order.
type wpClient struct {
	websocket.BaseHandler
	mu   sync.Mutex
	n    int
	bad  string
	done chan struct{}
	want int
}

func (c *wpClient) OnMessage(_ *websocket.Conn, _ websocket.MessageType, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.TrimSpace(string(data)) != strconv.Itoa(c.n) && c.bad == "" {
		c.bad = fmt.Sprintf("echo %d = %.20q", c.n, data)
	}
	c.n++
	if c.n == c.want {
		close(c.done)
	}
}

// wpSend sends the messages 0..n-1 on c (the padding makes each pad
// bytes long at least), retrying while the client's queue is full.
func wpSend(t *testing.T, c *websocket.Conn, n, pad int) error {
	deadline := time.Now().Add(testTimeout)
	for i := 0; i < n; {
		msg := strconv.Itoa(i)
		msg += strings.Repeat(" ", max(0, pad-len(msg)))
		err := c.WriteMessage(websocket.TextMessage, []byte(msg))
		switch {
		case errors.Is(err, websocket.ErrQueueFull) && time.Now().Before(deadline):
			time.Sleep(time.Millisecond)
			continue
		case err != nil:
			return fmt.Errorf("message %d: %w", i, err)
		}
		i++
	}
	return nil
}

func wpDial(t *testing.T, url string, want int) (*websocket.Conn, *wpClient) {
	h := &wpClient{done: make(chan struct{}), want: want}
	// DropWhenFull: a write that finds the queue full is refused and
	// tried again (wpSend), not the connection's end.
	return dial(t, &websocket.Dialer{Options: websocket.Options{Handler: h, DropWhenFull: true}}, url), h
}

func wpWait(t *testing.T, h *wpClient) {
	t.Helper()
	select {
	case <-h.done:
	case <-time.After(testTimeout):
		h.mu.Lock()
		defer h.mu.Unlock()
		t.Fatalf("%d echoes of %d within %v", h.n, h.want, testTimeout)
	}
	if h.bad != "" {
		t.Fatal(h.bad)
	}
}

func wpRecv[T any](t *testing.T, ch chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatalf("no %s within %v", what, testTimeout)
		var zero T
		return zero
	}
}

// TestPoolOrder: the messages of many connections, on a pool of 3
// workers, reach OnMessage in order, never two callbacks of a connection
// at once, OnOpen first and OnClose after them all.
func TestPoolOrder(t *testing.T) { backendtest.Run(t, testPoolOrder) }

func testPoolOrder(t *testing.T) {
	s := newWPServer()
	url, _ := wpServe(t, s, engine.PoolOptions{MaxWorkers: 3, MaxQueued: 2 << 10})
	const conns, msgs = 8, 500
	var wg sync.WaitGroup
	for range conns {
		c, h := wpDial(t, url, msgs)
		wg.Go(func() {
			if err := wpSend(t, c, msgs, 0); err != nil {
				t.Error(err)
				return
			}
			wpWait(t, h)
			c.Close(websocket.StatusNormalClosure, "")
		})
	}
	wg.Wait()
	for range conns {
		st := wpRecv(t, s.closed, "OnClose")
		if st == nil || st.bad != "" || st.n != msgs {
			t.Errorf("connection state %+v, want %d messages in order", st, msgs)
		}
		wpRecv(t, s.errs, "OnClose error")
	}
}

// TestPoolBlockedHandler: with two workers, a connection whose OnMessage
// blocks holds one; other connections are served.
func TestPoolBlockedHandler(t *testing.T) { backendtest.Run(t, testPoolBlockedHandler) }

func testPoolBlockedHandler(t *testing.T) {
	s := newWPServer()
	release := make(chan struct{})
	blocked := make(chan struct{}, 1)
	s.block = func(c *websocket.Conn, msg string) {
		if msg == "block" {
			blocked <- struct{}{}
			<-release
		}
	}
	url, _ := wpServe(t, s, engine.PoolOptions{MaxWorkers: 2})
	t.Cleanup(func() { close(release) })
	stuck, _ := wpDial(t, url, 1)
	stuck.WriteMessage(websocket.TextMessage, []byte("block"))
	wpRecv(t, blocked, "the blocking callback")
	for range 3 {
		c, h := wpDial(t, url, 50)
		if err := wpSend(t, c, 50, 0); err != nil {
			t.Fatal(err)
		}
		wpWait(t, h)
	}
}

// TestPoolQueueBound: while a connection's OnMessage blocks and its peer
// floods it, the loop stops reading it once MaxQueued bytes of messages
// wait; once the callback returns, every message comes, in order.
func TestPoolQueueBound(t *testing.T) { backendtest.Run(t, testPoolQueueBound) }

func testPoolQueueBound(t *testing.T) {
	s := newWPServer()
	// No echo: a client that floods and is echoed to stops reading when
	// its own output passes the engine's WriteHighWater, and then so does
	// the server, whatever runs its callbacks.
	s.quiet = true
	release := make(chan struct{}, 1)
	blocked := make(chan struct{}, 1)
	s.block = func(c *websocket.Conn, msg string) {
		if msg == "0"+strings.Repeat(" ", 1023) {
			blocked <- struct{}{}
			<-release
		}
	}
	const maxQueued = 16 << 10
	url, u := wpServe(t, s, engine.PoolOptions{MaxWorkers: 2, MaxQueued: maxQueued})
	t.Cleanup(func() { release <- struct{}{} })
	const msgs = 20_000 // 20 MB: more than the socket buffers and the client's queue hold
	c, _ := wpDial(t, url, msgs)
	sent := make(chan error, 1)
	go func() { sent <- wpSend(t, c, msgs, 1024) }()
	wpRecv(t, blocked, "the blocking callback")
	var in uint64
	stalled := func() bool {
		in = u.Stats().BytesIn
		time.Sleep(50 * time.Millisecond)
		return u.Stats().BytesIn == in
	}
	deadline := time.Now().Add(testTimeout)
	for !stalled() {
		if time.Now().After(deadline) {
			t.Fatalf("the server went on reading: %d bytes", in)
		}
	}
	// The bound, a receive's bytes (64 KiB) and on io_uring what the
	// multishot receive brought before it stopped (under 128 KiB).
	if limit := uint64(maxQueued + 64<<10 + 128<<10); in > limit {
		t.Errorf("the server read %d bytes of messages while the callback blocked, want at most %d", in, limit)
	}
	release <- struct{}{}
	if err := wpRecv(t, sent, "the client's sends"); err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if st := wpRecv(t, s.closed, "OnClose"); st == nil || st.bad != "" || st.n != msgs {
		t.Errorf("connection state %+v, want %d messages in order", st, msgs)
	}
	wpRecv(t, s.errs, "OnClose error")
}

// TestPoolPanic: a pooled OnMessage that panics fails its connection
// with a close frame 1011, and OnClose gets the *engine.PanicError; the
// other connections are served.
func TestPoolPanic(t *testing.T) { backendtest.Run(t, testPoolPanic) }

func testPoolPanic(t *testing.T) {
	s := newWPServer()
	url, _ := wpServe(t, s, engine.PoolOptions{MaxWorkers: 1})
	closed := make(chan error, 1)
	ch := &closeRecorder{closed: closed}
	bad := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: ch}}, url)
	bad.WriteMessage(websocket.TextMessage, []byte("boom"))
	wpRecv(t, s.closed, "OnClose")
	var pe *engine.PanicError
	if err := wpRecv(t, s.errs, "OnClose error"); !errors.As(err, &pe) || pe.Value != "boom" {
		t.Errorf("server OnClose(%v), want a *PanicError of boom", err)
	}
	if err := wpRecv(t, closed, "the client's OnClose"); websocket.CloseStatus(err) != websocket.StatusInternalError {
		t.Errorf("client OnClose(%v), want status 1011", err)
	}
	c, h := wpDial(t, url, 10)
	if err := wpSend(t, c, 10, 0); err != nil {
		t.Fatal(err)
	}
	wpWait(t, h)
}

type closeRecorder struct {
	websocket.BaseHandler
	closed chan error
}

func (r *closeRecorder) OnClose(_ *websocket.Conn, err error) { r.closed <- err }

var _ = context.Background
