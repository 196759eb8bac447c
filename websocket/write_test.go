package websocket_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// opened is a Handler that hands each connection over on open.
type opened struct {
	websocket.BaseHandler
	conns  chan *websocket.Conn
	closed chan error
}

func newOpened() *opened {
	return &opened{conns: make(chan *websocket.Conn, 16), closed: make(chan error, 16)}
}
func (o *opened) OnOpen(c *websocket.Conn)             { o.conns <- c }
func (o *opened) OnClose(_ *websocket.Conn, err error) { o.closed <- err }

func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(testTimeout):
		t.Fatal("nothing within the timeout")
		panic("unreachable")
	}
}

// TestQueueFull writes to a client that does not read until the queue
// passes MaxQueued: by default the connection is closed, with
// ErrQueueFull; with DropWhenFull only the message is dropped, and the
// connection serves on once the client reads again.
func TestQueueFull(t *testing.T) {
	for _, drop := range []bool{false, true} {
		t.Run(map[bool]string{false: "close", true: "drop"}[drop], func(t *testing.T) {
			srv := newOpened()
			u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, MaxQueued: 64 << 10, DropWhenFull: drop}}
			rc, _ := rawDial(t, serveWS(t, u, false))
			c := recv(t, srv.conns)
			msg := bytes.Repeat([]byte("q"), 32<<10)
			var err error
			for i := 0; i < 10000 && err == nil; i++ { // the socket buffers fill first
				err = c.WriteMessage(websocket.BinaryMessage, msg)
			}
			if !errors.Is(err, websocket.ErrQueueFull) {
				t.Fatalf("WriteMessage = %v, want ErrQueueFull", err)
			}
			if !drop {
				if err := recv(t, srv.closed); !errors.Is(err, websocket.ErrQueueFull) {
					t.Errorf("OnClose(%v), want ErrQueueFull", err)
				}
				return
			}
			if c.Buffered() == 0 {
				t.Error("Buffered() = 0 with the queue full")
			}
			go io.Copy(io.Discard, rc.r) // the client reads again
			deadline := time.Now().Add(testTimeout)
			for c.WriteMessage(websocket.BinaryMessage, msg) != nil {
				if time.Now().After(deadline) {
					t.Fatal("writes still refused after the client read")
				}
				time.Sleep(time.Millisecond)
			}
			c.CloseNow()
			recv(t, srv.closed)
		})
	}
}

// TestCloseTimeout: a peer that never answers a close frame is cut after
// CloseTimeout, and OnClose says so.
func TestCloseTimeout(t *testing.T) {
	srv := newOpened()
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, CloseTimeout: 100 * time.Millisecond}}
	rc, _ := rawDial(t, serveWS(t, u, false))
	c := recv(t, srv.conns)
	if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(websocket.StatusNormalClosure, ""); !errors.Is(err, websocket.ErrCloseSent) {
		t.Errorf("second Close = %v, want ErrCloseSent", err)
	}
	rc.frame(0x82, true, []byte("still talking")) // input meanwhile does not reset the wait
	if err := recv(t, srv.closed); !errors.Is(err, websocket.ErrCloseTimeout) {
		t.Errorf("OnClose(%v), want ErrCloseTimeout", err)
	}
}

// TestStream writes a message in fragments while another goroutine's
// WriteMessage is held behind it, and pings go out between the fragments.
func TestStream(t *testing.T) {
	srv := newOpened()
	rc, _ := rawDial(t, serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false))
	c := recv(t, srv.conns)
	w, err := c.NextWriter(websocket.TextMessage)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "one ")
	if err := within(t, "WriteMessage behind a stream", func() error {
		return c.WriteMessage(websocket.TextMessage, []byte("after"))
	}); err != nil { // held, not waiting: and it must not jump in
		t.Fatal(err)
	}
	c.WriteControl(websocket.PingMessage, []byte("between"))
	io.WriteString(w, "two")
	w.Close()
	var got []string
	for range 5 {
		f, err := rc.read()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f.String())
	}
	want := []string{`0x1 "one "`, `0x89 "between"`, `0x0 "two"`, `0x80 ""`, `0x81 "after"`}
	if !slices.Equal(got, want) {
		t.Errorf("frames %q, want %q", got, want)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	c.CloseNow()
}

// TestBroadcast sends one message to many connections, and checks each
// gets it, once.
func TestBroadcast(t *testing.T) {
	srv := newOpened()
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false)
	var raws []*rawConn
	var conns []*websocket.Conn
	for range 5 {
		rc, _ := rawDial(t, url)
		raws = append(raws, rc)
		conns = append(conns, recv(t, srv.conns))
	}
	if n := websocket.Broadcast(conns, websocket.TextMessage, []byte("all")); n != 5 {
		t.Errorf("Broadcast = %d, want 5", n)
	}
	for _, rc := range raws {
		if f, err := rc.read(); err != nil || f.String() != `0x81 "all"` {
			t.Errorf("read %v, %v; want the broadcast", f, err)
		}
	}
	for _, c := range conns {
		c.CloseNow()
	}
}
