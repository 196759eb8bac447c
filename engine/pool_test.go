package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// ptConn is a pooled connection's state in ptHandler: what its callbacks
// saw, checked by the test after OnClose.
type ptConn struct {
	busy   atomic.Int32 // callbacks of this connection running now
	bytes  int          // OnData's bytes, consumed
	lines  int          // lines echoed
	bad    string       // the first broken rule
	opened bool
}

// ptHandler echoes lines ("n\n") on a Pool, checking that a connection's
// callbacks never overlap, that OnOpen comes first, that lines arrive in
// order, and that OnClose comes after every OnData. block, if set, is
// called with each line before it is echoed.
type ptHandler struct {
	engine.BaseHandler
	block  func(c *engine.Conn, line string)
	closed chan *ptConn
	errs   chan error
}

func newPTHandler() *ptHandler {
	return &ptHandler{closed: make(chan *ptConn, 256), errs: make(chan error, 256)}
}

func (h *ptHandler) enter(c *engine.Conn) *ptConn {
	s, _ := c.Context().(*ptConn)
	if s == nil {
		return nil
	}
	if s.busy.Add(1) != 1 && s.bad == "" {
		s.bad = "two callbacks at once"
	}
	return s
}

func (h *ptHandler) leave(s *ptConn) { s.busy.Add(-1) }

func (h *ptHandler) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	s := &ptConn{opened: true}
	c.SetContext(s)
	h.enter(c)
	defer h.leave(s)
	return nil, engine.None
}

func (h *ptHandler) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	s := h.enter(c)
	if s == nil {
		return engine.Close // OnData before OnOpen: the test's checks fail on the missing close report
	}
	defer h.leave(s)
	for {
		line, err := in.ReadUntil('\n')
		if err != nil {
			return engine.None
		}
		s.bytes += len(line)
		text := strings.TrimSuffix(string(line), "\n")
		if h.block != nil {
			h.block(c, text)
		}
		if text == "boom" {
			panic("boom")
		}
		if n, err := strconv.Atoi(text); err == nil && n != s.lines && s.bad == "" {
			s.bad = fmt.Sprintf("line %d came as number %d", n, s.lines)
		}
		s.lines++
		c.Write(line)
	}
}

func (h *ptHandler) OnClose(c *engine.Conn, err error) {
	s := h.enter(c)
	if s == nil {
		return
	}
	h.leave(s)
	h.closed <- s
	h.errs <- err
}

// ptStart starts an engine of one loop with h on a pool of o, closed at
// cleanup after the engine stopped.
func ptStart(t *testing.T, h engine.Handler, o engine.PoolOptions, eo engine.Options) (*engine.Engine, *engine.Pool, net.Addr) {
	t.Helper()
	p := engine.NewPool(o)
	eo.Pool = p
	if eo.Loops == 0 {
		eo.Loops = 1
	}
	e, err := engine.New(h, eo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		etStop(t, e)
		p.Close()
		if n := p.Workers(); n != 0 {
			t.Errorf("Pool.Workers() after Close = %d, want 0", n)
		}
	})
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	return e, p, etListen(t, e, "tcp")
}

// ptLines writes the lines 0..n-1 to c and checks they come back.
func ptLines(t *testing.T, c net.Conn, n int) error {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "%d\n", i)
	}
	c.SetDeadline(time.Now().Add(etWait))
	errc := make(chan error, 1)
	go func() { _, err := c.Write(b.Bytes()); errc <- err }()
	got := make([]byte, b.Len())
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if err := <-errc; err != nil {
		return err
	}
	if !bytes.Equal(got, b.Bytes()) {
		return errors.New("the echo differs from the lines sent")
	}
	return nil
}

// TestPoolOrder: many connections' lines, on a pool of 3 workers, come
// back whole and in order; no connection's callbacks overlap; OnClose
// comes after every OnData and sees every byte.
func TestPoolOrder(t *testing.T) { backendtest.Run(t, testPoolOrder) }

func testPoolOrder(t *testing.T) {
	h := newPTHandler()
	_, _, a := ptStart(t, h, engine.PoolOptions{MaxWorkers: 3, MaxQueued: 1 << 10}, engine.Options{Loops: 2})
	const conns, lines = 20, 2000
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	sent := 0
	for range conns {
		c := etDial(t, a)
		wg.Go(func() {
			if err := ptLines(t, c, lines); err != nil {
				errs <- err
			}
			c.Close()
		})
	}
	for i := range lines {
		sent += len(strconv.Itoa(i)) + 1
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for range conns {
		s := etRecv(t, h.closed, "OnClose")
		if s.bad != "" || s.bytes != sent || s.lines != lines {
			t.Errorf("connection: rule broken %q, bytes %d, lines %d; want none, %d, %d", s.bad, s.bytes, s.lines, sent, lines)
		}
		if err := etRecv(t, h.errs, "OnClose error"); err != io.EOF {
			t.Errorf("OnClose(%v), want io.EOF", err)
		}
	}
}

// TestPoolBlockedHandler: with two workers, a connection whose callback
// blocks holds one; the other connections are served by the other.
func TestPoolBlockedHandler(t *testing.T) { backendtest.Run(t, testPoolBlockedHandler) }

func testPoolBlockedHandler(t *testing.T) {
	h := newPTHandler()
	release := make(chan struct{})
	blocked := make(chan struct{}, 1)
	h.block = func(c *engine.Conn, line string) {
		if line == "block" {
			blocked <- struct{}{}
			<-release
		}
	}
	_, _, a := ptStart(t, h, engine.PoolOptions{MaxWorkers: 2}, engine.Options{})
	stuck := etDial(t, a)
	stuck.Write([]byte("block\n"))
	etRecv(t, blocked, "the blocking callback")
	defer close(release)
	for range 5 {
		c := etDial(t, a)
		if err := ptLines(t, c, 100); err != nil {
			t.Fatalf("beside a blocked callback: %v", err)
		}
	}
}

// TestPoolQueueBound: a connection whose callback blocks while its peer
// floods it stops being read once PoolOptions.MaxQueued bytes wait (the
// engine's input count stalls, and the peer's writes stop), and is read
// again, every byte in order, once the callback returns.
func TestPoolQueueBound(t *testing.T) { backendtest.Run(t, testPoolQueueBound) }

func testPoolQueueBound(t *testing.T) {
	h := newPTHandler()
	release := make(chan struct{}, 1)
	blocked := make(chan struct{}, 1)
	h.block = func(c *engine.Conn, line string) {
		if line == "0" {
			blocked <- struct{}{}
			<-release
		}
	}
	const maxQueued = 8 << 10
	e, _, a := ptStart(t, h, engine.PoolOptions{MaxWorkers: 2, MaxQueued: maxQueued}, engine.Options{ReadBufferSize: 4 << 10})
	t.Cleanup(func() { close(release) }) // before the engine's stop, which waits for the callback
	c := etDial(t, a)
	c.(*net.TCPConn).SetWriteBuffer(32 << 10) // no autotuning: the socket buffers hold little
	lines, wait := 400_000, etWait            // about 2.6 MB: far more than the socket buffers hold
	if backendtest.UnderWine() {
		// Echoed line by line through wineserver, 2.6 MB take longer
		// than etWait; 100,000 lines (590 KB) still outgrow the buffers.
		lines, wait = 100_000, 4*etWait
	}
	var b bytes.Buffer
	for i := range lines {
		fmt.Fprintf(&b, "%d\n", i)
	}
	var written atomic.Int64
	werr := make(chan error, 1)
	go func() {
		c.SetWriteDeadline(time.Now().Add(wait))
		p := b.Bytes()
		for len(p) > 0 {
			n, err := c.Write(p[:min(len(p), 4<<10)])
			written.Add(int64(n))
			if err != nil {
				werr <- err
				return
			}
			p = p[n:]
		}
		werr <- nil
	}()
	etRecv(t, blocked, "the blocking callback")
	// The peer's writes stall: the loop stopped reading.
	var in uint64
	etWaitFor(t, "the peer's writes to stall", func() bool {
		w := written.Load()
		in = e.Stats().Total().BytesIn
		time.Sleep(50 * time.Millisecond)
		return written.Load() == w && e.Stats().Total().BytesIn == in
	})
	// One receive past the bound, and on io_uring what the multishot
	// receive brought before it stopped (under 128 KiB).
	if limit := uint64(maxQueued + 4<<10 + 128<<10); in > limit {
		t.Errorf("engine read %d bytes while the callback blocked, want at most %d", in, limit)
	}
	if w := written.Load(); w == int64(b.Len()) {
		t.Fatalf("the peer wrote all %d bytes while the callback blocked", w)
	}
	got := make(chan error, 1)
	go func() {
		r := bufio.NewReader(c)
		for i := range lines {
			line, err := r.ReadString('\n')
			if err != nil || line != strconv.Itoa(i)+"\n" {
				got <- fmt.Errorf("echo line %d = %q, %v", i, line, err)
				return
			}
		}
		got <- nil
	}()
	c.SetWriteDeadline(time.Now().Add(wait)) // from the release on
	release <- struct{}{}
	for _, ch := range []chan error{werr, got} {
		select {
		case err := <-ch:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(wait):
			t.Fatalf("the peer's writes and the echo did not end within %v", wait)
		}
	}
}

// TestPoolSaturatedLoopGoesOn: with every worker blocked, the loop still
// serves: OnTick runs, Execute's functions run, and the connections'
// bytes are read (up to their bound).
func TestPoolSaturatedLoopGoesOn(t *testing.T) { backendtest.Run(t, testPoolSaturatedLoopGoesOn) }

type ptTicker struct {
	*ptHandler
	ticks atomic.Int32
}

func (h *ptTicker) OnTick() (time.Duration, engine.Action) {
	h.ticks.Add(1)
	return time.Millisecond, engine.None
}

func testPoolSaturatedLoopGoesOn(t *testing.T) {
	h := &ptTicker{ptHandler: newPTHandler()}
	release := make(chan struct{})
	blocked := make(chan *engine.Conn, 1)
	h.block = func(c *engine.Conn, line string) {
		if line == "block" {
			blocked <- c
			<-release
		}
	}
	e, _, a := ptStart(t, h, engine.PoolOptions{MaxWorkers: 1}, engine.Options{})
	etDial(t, a).Write([]byte("block\n"))
	bc := etRecv(t, blocked, "the blocking callback")
	defer close(release)
	ticks := h.ticks.Load()
	etWaitFor(t, "OnTick beside a saturated pool", func() bool { return h.ticks.Load() > ticks+3 })
	ran := make(chan struct{})
	bc.Execute(func(*engine.Conn) { close(ran) })
	etRecv(t, ran, "Execute's function beside a saturated pool")
	in := e.Stats().Total().BytesIn
	other := etDial(t, a)
	other.Write([]byte("0\n1\n"))
	etWaitFor(t, "the loop to read another connection", func() bool { return e.Stats().Total().BytesIn >= in+4 })
}

// TestPoolPanic: a pooled callback that panics resets its connection
// only, with a *PanicError in OnClose, logged; the others are served.
func TestPoolPanic(t *testing.T) { backendtest.Run(t, testPoolPanic) }

func testPoolPanic(t *testing.T) {
	h := newPTHandler()
	l := new(etLog)
	_, _, a := ptStart(t, h, engine.PoolOptions{MaxWorkers: 1}, engine.Options{ErrorLog: log.New(l, "", 0)})
	bad := etDial(t, a)
	bad.Write([]byte("0\nboom\n1\n"))
	etRecv(t, h.closed, "OnClose")
	var pe *engine.PanicError
	if err := etRecv(t, h.errs, "OnClose error"); !errors.As(err, &pe) || pe.Value != "boom" || !strings.Contains(string(pe.Stack), "pool_test.go") {
		t.Errorf("OnClose(%v), want a *PanicError of boom with the callback's stack", err)
	}
	if !strings.Contains(l.String(), "engine: panic in OnData serving") {
		t.Errorf("log = %q, want the panic", l.String())
	}
	bad.SetReadDeadline(time.Now().Add(etWait))
	if b, _ := io.ReadAll(bad); string(b) != "0\n" {
		t.Errorf("the panicking connection read %q, want %q and its end", b, "0\n")
	}
	if err := ptLines(t, etDial(t, a), 100); err != nil {
		t.Fatalf("after a panic: %v", err)
	}
}

// TestPoolHalfClose: a peer that sends and then shuts its side down gets
// every reply, then the end: the close waits for the queued OnData.
func TestPoolHalfClose(t *testing.T) { backendtest.Run(t, testPoolHalfClose) }

func testPoolHalfClose(t *testing.T) {
	h := newPTHandler()
	h.block = func(*engine.Conn, string) { time.Sleep(100 * time.Microsecond) }
	_, _, a := ptStart(t, h, engine.PoolOptions{}, engine.Options{})
	c := etDial(t, a).(*net.TCPConn)
	var b bytes.Buffer
	for i := range 300 {
		fmt.Fprintf(&b, "%d\n", i)
	}
	c.Write(b.Bytes())
	c.CloseWrite()
	c.SetReadDeadline(time.Now().Add(etWait))
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, b.Bytes()) {
		t.Fatalf("read %d bytes, %v; want the %d sent back, and the end", len(got), err, b.Len())
	}
	if err := etRecv(t, h.errs, "OnClose error"); err != io.EOF {
		t.Errorf("OnClose(%v), want io.EOF", err)
	}
}

// TestPoolStopFromCallback: Stop and Shutdown called from a pooled
// callback start the stop and return, as from the loop: they cannot wait
// for the pool they run on.
func TestPoolStopFromCallback(t *testing.T) { backendtest.Run(t, testPoolStopFromCallback) }

func testPoolStopFromCallback(t *testing.T) {
	h := newPTHandler()
	h.block = func(c *engine.Conn, line string) {
		if line == "stop" {
			c.Engine().Stop()
		}
	}
	e, _, a := ptStart(t, h, engine.PoolOptions{}, engine.Options{})
	etDial(t, a).Write([]byte("stop\n"))
	etRecv(t, e.Done(), "the engine's stop")
	if err := etRecv(t, h.errs, "OnClose error"); !errors.Is(err, engine.ErrEngineStopped) {
		t.Errorf("OnClose(%v), want ErrEngineStopped", err)
	}
}

// TestPoolWaitOutputFreesWorker: a pooled callback waiting in WaitOutput
// for a peer that does not read gives its worker up: on a pool of one
// worker, another connection is served meanwhile.
func TestPoolWaitOutputFreesWorker(t *testing.T) { backendtest.Run(t, testPoolWaitOutputFreesWorker) }

func testPoolWaitOutputFreesWorker(t *testing.T) {
	h := newPTHandler()
	done := make(chan struct{})
	waiting := make(chan struct{}, 1)
	h.block = func(c *engine.Conn, line string) {
		if line == "flood" {
			c.Write(make([]byte, 8<<20)) // more than the socket buffers take
			waiting <- struct{}{}
			c.WaitOutput(0, done)
		}
	}
	_, _, a := ptStart(t, h, engine.PoolOptions{MaxWorkers: 1}, engine.Options{})
	t.Cleanup(func() { close(done) })
	etDial(t, a).Write([]byte("flood\n")) // and never read
	etRecv(t, waiting, "the flooding callback")
	if err := ptLines(t, etDial(t, a), 50); err != nil {
		t.Fatalf("beside a callback in WaitOutput: %v", err)
	}
}

// ptGoodbye says goodbye from OnDeadline and OnDrain, on the pool.
type ptGoodbye struct{ *ptHandler }

func (h ptGoodbye) OnDeadline(c *engine.Conn, err error) engine.Action {
	c.Write([]byte("idle\n"))
	return engine.None
}

func (h ptGoodbye) OnDrain(c *engine.Conn) { c.Write([]byte("drain\n")) }

// TestPoolGoodbyes: an idle timeout's OnDeadline and Shutdown's OnDrain
// run on the pool, after the OnData queued before them, and their words
// reach the peer before the close.
func TestPoolGoodbyes(t *testing.T) { backendtest.Run(t, testPoolGoodbyes) }

func testPoolGoodbyes(t *testing.T) {
	h := ptGoodbye{newPTHandler()}
	e, _, a := ptStart(t, h, engine.PoolOptions{}, engine.Options{IdleTimeout: 200 * time.Millisecond})
	idle := etDial(t, a)
	idle.Write([]byte("0\n"))
	idle.SetReadDeadline(time.Now().Add(etWait))
	if b, err := io.ReadAll(idle); string(b) != "0\nidle\n" || err != nil {
		t.Errorf("an idle connection read %q, %v; want the echo, the goodbye and the end", b, err)
	}
	etRecv(t, h.closed, "OnClose")
	if err := etRecv(t, h.errs, "OnClose error"); !errors.Is(err, engine.ErrIdleTimeout) {
		t.Errorf("OnClose(%v), want ErrIdleTimeout", err)
	}

	drained := etDial(t, a)
	if err := ptLines(t, drained, 1); err != nil {
		t.Fatal(err)
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), etWait)
		defer cancel()
		shut <- e.Shutdown(ctx)
	}()
	drained.SetReadDeadline(time.Now().Add(etWait))
	if b, err := io.ReadAll(drained); string(b) != "drain\n" || err != nil {
		t.Errorf("at Shutdown the connection read %q, %v; want the goodbye and the end", b, err)
	}
	if err := etRecv(t, shut, "Shutdown"); err != nil {
		t.Errorf("Shutdown = %v", err)
	}
	etRecv(t, h.closed, "OnClose")
	if err := etRecv(t, h.errs, "OnClose error"); err != nil {
		t.Errorf("OnClose(%v) after Shutdown, want nil", err)
	}
}
