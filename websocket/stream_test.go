package websocket_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
	"github.com/galeio/gale/websocket"
)

// promptly bounds a write that must not wait: generous for -race on a
// busy machine, and far below the tests' other timeouts.
const promptly = 2 * time.Second

// within runs f on a goroutine of its own and returns its result, failing
// the test if f has not returned within promptly. (A test whose f may
// block registers a cleanup that releases it.)
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	select {
	case v := <-ch:
		return v
	case <-time.After(promptly):
		t.Fatalf("%s did not return within %v", what, promptly)
		panic("unreachable")
	}
}

// readFrames reads n frames from rc (each bounded by rc's deadline).
func readFrames(t *testing.T, rc *rawConn, n int) []string {
	t.Helper()
	var got []string
	for range n {
		f, err := rc.read()
		if err != nil {
			t.Fatalf("after frames %q: %v", got, err)
		}
		got = append(got, f.String())
	}
	return got
}

// openStream opens a stream on c and writes its first fragment. The
// stream is closed at the test's end, before the server: a writer stuck
// behind it (the bug these tests catch) is then released.
func openStream(t *testing.T, c *websocket.Conn, typ websocket.MessageType, first string) io.WriteCloser {
	t.Helper()
	w, err := c.NextWriter(typ)
	if err != nil {
		t.Fatalf("NextWriter: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := io.WriteString(w, first); err != nil {
		t.Fatalf("stream Write: %v", err)
	}
	return w
}

// writesBehind is a server Handler whose OnMessage, given "go", writes to
// the connection in target with WriteMessage, Broadcast and WritePrepared
// and reports their errors on done; it echoes other messages.
type writesBehind struct {
	websocket.BaseHandler
	conns  chan *websocket.Conn
	target atomic.Pointer[websocket.Conn]
	done   chan error
}

func (h *writesBehind) OnOpen(c *websocket.Conn) { h.conns <- c }

func (h *writesBehind) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	if string(data) != "go" {
		c.WriteMessage(typ, data)
		return
	}
	to := h.target.Load()
	var errs []error
	errs = append(errs, to.WriteMessage(websocket.TextMessage, []byte("one")))
	if n := websocket.Broadcast([]*websocket.Conn{to, c}, websocket.TextMessage, []byte("two")); n != 2 {
		errs = append(errs, fmt.Errorf("Broadcast = %d, want 2", n))
	}
	pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, []byte("three"))
	errs = append(errs, to.WritePrepared(pm))
	h.done <- errors.Join(errs...)
}

// TestWriteBehindStream: OnMessage writes (WriteMessage, Broadcast,
// WritePrepared) to a connection on which the test holds a stream open.
// The callback returns at once, the loop goes on serving its other
// connection, and once the stream ends its peer gets the stream's message
// then the three others, whole and in order.
func TestWriteBehindStream(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		h := &writesBehind{conns: make(chan *websocket.Conn, 2), done: make(chan error, 1)}
		url := serveWSLoops(t, &websocket.Upgrader{Options: websocket.Options{Handler: h}}, false, 1)
		rcA, _ := rawDial(t, url)
		a := recv(t, h.conns)
		rcB, _ := rawDial(t, url)
		b := recv(t, h.conns)
		h.target.Store(a)
		w := openStream(t, a, websocket.BinaryMessage, "head ")

		rcB.frame(0x81, true, []byte("go"))
		select {
		case err := <-h.done:
			if err != nil {
				t.Errorf("OnMessage's writes: %v", err)
			}
		case <-time.After(promptly):
			t.Fatalf("OnMessage's writes to a connection with an open stream did not return within %v", promptly)
		}
		rcB.nc.SetReadDeadline(time.Now().Add(promptly))
		rcB.frame(0x82, true, []byte("echo"))
		if got, want := readFrames(t, rcB, 2), []string{`0x81 "two"`, `0x82 "echo"`}; !slices.Equal(got, want) {
			t.Errorf("the loop's other connection got %q, want %q", got, want)
		}

		io.WriteString(w, "tail")
		if err := w.Close(); err != nil {
			t.Fatalf("stream Close: %v", err)
		}
		want := []string{`0x2 "head "`, `0x0 "tail"`, `0x80 ""`, `0x81 "one"`, `0x81 "two"`, `0x81 "three"`}
		if got := readFrames(t, rcA, len(want)); !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
		a.CloseNow()
		b.CloseNow()
	})
}

// TestStreamBehindStream: a second stream opened while one is open does
// not wait either; its fragments, and a message written after it was
// opened, follow the first stream, in order.
func TestStreamBehindStream(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		srv := newOpened()
		rc, _ := rawDial(t, serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false))
		c := recv(t, srv.conns)
		w1 := openStream(t, c, websocket.TextMessage, "a1")
		type opened struct {
			w   io.WriteCloser
			err error
		}
		o := within(t, "a second NextWriter", func() opened {
			w, err := c.NextWriter(websocket.BinaryMessage)
			return opened{w, err}
		})
		if o.err != nil {
			t.Fatalf("second NextWriter: %v", o.err)
		}
		w2 := o.w
		t.Cleanup(func() { w2.Close() })
		io.WriteString(w2, "b1")
		if err := c.WriteMessage(websocket.TextMessage, []byte("m")); err != nil {
			t.Fatalf("WriteMessage behind two streams: %v", err)
		}
		io.WriteString(w2, "b2")
		if err := w2.Close(); err != nil {
			t.Fatalf("held stream's Close: %v", err)
		}
		io.WriteString(w1, "a2")
		if err := w1.Close(); err != nil {
			t.Fatalf("stream Close: %v", err)
		}
		want := []string{`0x1 "a1"`, `0x0 "a2"`, `0x80 ""`, `0x2 "b1"`, `0x0 "b2"`, `0x80 ""`, `0x81 "m"`}
		if got := readFrames(t, rc, len(want)); !slices.Equal(got, want) {
			t.Errorf("frames %q, want %q", got, want)
		}
		c.CloseNow()
		recv(t, srv.closed)
	})
}

// TestWriteBehindStreamClient: on a client connection (masked frames,
// compressed or not) messages written while a stream is open follow it
// too, and a held stream's compressed fragments after them.
func TestWriteBehindStreamClient(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, cm := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled} {
			t.Run(map[bool]string{false: "plain", true: "deflate"}[cm != 0], func(t *testing.T) {
				srv := newRecorder(false)
				url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv, Compression: cm}}, false)
				c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Compression: cm}}, url)
				srv.expect(t, "open")
				long := strings.Repeat("compressible when long enough; ", 20)
				w := openStream(t, c, websocket.TextMessage, "a ")
				pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, []byte("two "+long))
				if err := within(t, "writes behind a stream", func() error {
					w2, err := c.NextWriter(websocket.TextMessage)
					if err != nil {
						return err
					}
					_, err = io.WriteString(w2, long)
					return errors.Join(err, c.WriteMessage(websocket.TextMessage, []byte("one "+long)), c.WritePrepared(pm),
						w2.Close())
				}); err != nil {
					t.Fatalf("writes behind a stream: %v", err)
				}
				io.WriteString(w, "b")
				if err := w.Close(); err != nil {
					t.Fatalf("stream Close: %v", err)
				}
				for _, m := range []string{"a b", long, "one " + long, "two " + long} {
					srv.expect(t, "msg", m)
				}
				c.CloseNow()
				srv.expect(t, "close")
			})
		}
	})
}

// TestStreamOpenAtClose: a stream is open when the connection ends (Close,
// CloseNow, the peer's close frame, the peer gone). Every write then fails
// at once with the documented error, the stream's own included, and a
// message held behind the stream is dropped, not sent after the close
// frame.
func TestStreamOpenAtClose(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			close func(c *websocket.Conn, rc *rawConn)
			peer  bool  // the server learns of it from the peer: wait for OnClose
			want  error // what writes then fail with
			seen  []string
		}{
			{"Close", func(c *websocket.Conn, _ *rawConn) { c.Close(websocket.StatusNormalClosure, "") }, false,
				websocket.ErrCloseSent, []string{`0x1 "part"`, `0x88 "\x03\xe8"`}},
			{"CloseNow", func(c *websocket.Conn, _ *rawConn) { c.CloseNow() }, false, net.ErrClosed, nil},
			{"PeerClose", func(_ *websocket.Conn, rc *rawConn) { rc.frame(0x88, true, closePayload(1000, "")) }, true,
				websocket.ErrCloseSent, []string{`0x1 "part"`, `0x88 "\x03\xe8"`}},
			{"PeerGone", func(_ *websocket.Conn, rc *rawConn) { rc.nc.Close() }, true, net.ErrClosed, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv := newOpened()
				rc, _ := rawDial(t, serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false))
				c := recv(t, srv.conns)
				w := openStream(t, c, websocket.TextMessage, "part")
				if err := within(t, "WriteMessage behind a stream", func() error {
					return c.WriteMessage(websocket.TextMessage, []byte("held"))
				}); err != nil {
					t.Fatalf("WriteMessage behind a stream: %v", err)
				}
				tc.close(c, rc)
				if tc.peer {
					recv(t, srv.closed)
				}
				pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, []byte("late"))
				for _, wr := range []struct {
					name string
					f    func() error
				}{
					{"WriteMessage", func() error { return c.WriteMessage(websocket.TextMessage, []byte("late")) }},
					{"WritePrepared", func() error { return c.WritePrepared(pm) }},
					{"NextWriter", func() error { _, err := c.NextWriter(websocket.TextMessage); return err }},
					{"stream Write", func() error { _, err := io.WriteString(w, "more"); return err }},
					{"stream Close", w.Close},
				} {
					if err := within(t, wr.name, wr.f); !errors.Is(err, tc.want) {
						t.Errorf("%s after %s = %v, want %v", wr.name, tc.name, err, tc.want)
					}
				}
				if n := within(t, "Broadcast", func() int {
					return websocket.Broadcast([]*websocket.Conn{c}, websocket.TextMessage, []byte("late"))
				}); n != 0 {
					t.Errorf("Broadcast after %s = %d, want 0", tc.name, n)
				}
				if tc.seen != nil {
					if got := readFrames(t, rc, len(tc.seen)); !slices.Equal(got, tc.seen) {
						t.Errorf("frames %q, want %q", got, tc.seen)
					}
				}
				if !tc.peer {
					if tc.name == "Close" {
						rc.frame(0x88, true, closePayload(1000, ""))
					}
					recv(t, srv.closed)
				}
			})
		}
	})
}

// TestQueueFullBehindStream: messages held behind a stream count against
// Options.MaxQueued, with its policy: by default the connection is cut;
// with DropWhenFull only the message that did not fit is dropped, and
// those held go out after the stream.
func TestQueueFullBehindStream(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, drop := range []bool{false, true} {
			t.Run(map[bool]string{false: "close", true: "drop"}[drop], func(t *testing.T) {
				srv := newOpened()
				u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, MaxQueued: 64 << 10, DropWhenFull: drop}}
				rc, _ := rawDial(t, serveWS(t, u, false))
				c := recv(t, srv.conns)
				w := openStream(t, c, websocket.BinaryMessage, "head")
				msg := bytes.Repeat([]byte("h"), 16<<10)
				held := 0
				var err error
				for held < 8 {
					err = within(t, "WriteMessage behind a stream", func() error { return c.WriteMessage(websocket.BinaryMessage, msg) })
					if err != nil {
						break
					}
					held++
				}
				// Four frames of 16 KiB and 4 header bytes pass 64 KiB: the
				// fifth write finds the cap reached.
				if held != 4 || !errors.Is(err, websocket.ErrQueueFull) {
					t.Fatalf("WriteMessage behind a stream: %d taken, then %v; want 4, then ErrQueueFull", held, err)
				}
				if !drop {
					if err := recv(t, srv.closed); !errors.Is(err, websocket.ErrQueueFull) {
						t.Errorf("OnClose(%v), want ErrQueueFull", err)
					}
					if _, err := io.WriteString(w, "x"); !errors.Is(err, net.ErrClosed) {
						t.Errorf("stream Write after the cut = %v, want net.ErrClosed", err)
					}
					return
				}
				pm, _ := websocket.NewPreparedMessage(websocket.BinaryMessage, msg)
				if err := c.WritePrepared(pm); !errors.Is(err, websocket.ErrQueueFull) {
					t.Errorf("WritePrepared with the queue full = %v, want ErrQueueFull", err)
				}
				if n := websocket.Broadcast([]*websocket.Conn{c}, websocket.BinaryMessage, msg); n != 0 {
					t.Errorf("Broadcast with the queue full = %d, want 0", n)
				}
				if n := c.Buffered(); n < 4*len(msg) {
					t.Errorf("Buffered() = %d with 4 messages of %d held", n, len(msg))
				}
				io.WriteString(w, "tail")
				if err := w.Close(); err != nil {
					t.Fatalf("stream Close: %v", err)
				}
				// The held messages go to the loop now; until it has handed
				// them to the socket (on io_uring, at its next submission)
				// they still fill the queue, and a drop-when-full write
				// would be dropped.
				stresstest.WaitFor(t, 10*time.Second, "the held messages written", func() bool {
					return c.Buffered() < 64<<10-len(msg)
				})
				if err := c.WriteMessage(websocket.TextMessage, []byte("after")); err != nil {
					t.Fatalf("WriteMessage after the stream: %v", err)
				}
				want := []string{`0x2 "head"`, `0x0 "tail"`, `0x80 ""`}
				for range held {
					want = append(want, fmt.Sprintf("%#x %q", 0x82, msg))
				}
				want = append(want, `0x81 "after"`)
				if got := readFrames(t, rc, len(want)); !slices.Equal(got, want) {
					t.Errorf("frames (%d) differ from the %d wanted: the stream, the 4 held, then \"after\"", len(got), len(want))
				}
				c.CloseNow()
				recv(t, srv.closed)
			})
		}
	})
}

// TestStreamCutShort: with DropWhenFull, a stream whose fragment finds the
// queue full is dropped, and the connection kept, only if none of it went
// out; a message cut short cannot be followed by another, so the
// connection is cut then.
func TestStreamCutShort(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		srv := newOpened()
		u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, MaxQueued: 64 << 10, DropWhenFull: true}}
		rc, _ := rawDial(t, serveWS(t, u, false))
		c := recv(t, srv.conns)
		piece := bytes.Repeat([]byte("p"), 32<<10)
		var err error
		for i := 0; i < 10000 && err == nil; i++ { // the socket buffers fill first
			err = c.WriteMessage(websocket.BinaryMessage, piece)
		}
		if !errors.Is(err, websocket.ErrQueueFull) {
			t.Fatalf("WriteMessage = %v, want ErrQueueFull", err)
		}
		w, err := c.NextWriter(websocket.BinaryMessage)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(piece); !errors.Is(err, websocket.ErrQueueFull) {
			t.Fatalf("a stream's first Write with the queue full = %v, want ErrQueueFull", err)
		}
		if err := w.Close(); !errors.Is(err, websocket.ErrQueueFull) {
			t.Errorf("Close of the dropped stream = %v, want ErrQueueFull", err)
		}
		go io.Copy(io.Discard, rc.r) // the client reads again: the connection was kept
		deadline := time.Now().Add(testTimeout)
		for c.WriteMessage(websocket.BinaryMessage, piece) != nil {
			if time.Now().After(deadline) {
				t.Fatal("writes still refused after the client read")
			}
			time.Sleep(time.Millisecond)
		}

		rc2, _ := rawDial(t, serveWS(t, u, false))
		c2 := recv(t, srv.conns)
		w2 := openStream(t, c2, websocket.BinaryMessage, "begun")
		err = nil
		for i := 0; i < 10000 && err == nil; i++ {
			_, err = w2.Write(piece)
		}
		if !errors.Is(err, websocket.ErrQueueFull) {
			t.Fatalf("stream Write = %v, want ErrQueueFull", err)
		}
		if err := recv(t, srv.closed); !errors.Is(err, websocket.ErrQueueFull) {
			t.Errorf("OnClose(%v) of the connection whose stream was cut short, want ErrQueueFull", err)
		}
		if err := c2.WriteMessage(websocket.TextMessage, []byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("WriteMessage after the cut = %v, want net.ErrClosed", err)
		}
		rc2.nc.Close()
		c.CloseNow()
		recv(t, srv.closed)
	})
}
