package websocket_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// dialEngine returns an engine of one loop for a test's Dialers.
func dialEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// dialServed checks that a Dialer on e dials a well-behaved server and
// has a message echoed within servedWithin.
func dialServed(t *testing.T, e *engine.Engine) {
	t.Helper()
	_, url := limitServer(t, websocket.Options{}, nil)
	cli := &signal{got: make(chan int, 1)}
	d := &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e}}
	ctx, cancel := context.WithTimeout(context.Background(), servedWithin)
	defer cancel()
	c, _, err := d.Dial(ctx, url)
	if err != nil {
		t.Fatalf("a Dialer beside the hostile server: %v", err)
	}
	defer c.CloseNow()
	c.WriteMessage(websocket.TextMessage, []byte("well-behaved"))
	select {
	case <-cli.got:
	case <-ctx.Done():
		t.Fatalf("a Dialer beside the hostile server was not served within %v", servedWithin)
	}
}

// dial-head: a Dialer reads the server's response head up to 16 KiB; a
// longer one, or one that never ends, fails Dial with ErrBadHandshake.
func limitDialHead(t *testing.T) {
	if websocket.MaxResponseHeadForTest != 16<<10 {
		t.Errorf("the response head's cap is %d, want 16 KiB as documented", websocket.MaxResponseHeadForTest)
	}
	e := dialEngine(t)
	pad := "X-Pad: " + strings.Repeat("p", 40<<10)
	for _, tc := range []struct {
		name    string
		respond func(string) string
	}{
		{"40 KiB 101", ok101(pad)},
		{"endless head", func(string) string {
			return "HTTP/1.1 101 Switching Protocols\r\n" + strings.Repeat("X-Pad: p\r\n", 20000)
		}},
	} {
		url, _ := rawServer(t, tc.respond)
		d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: e}}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		c, _, err := d.Dial(ctx, url)
		cancel()
		if !errors.Is(err, websocket.ErrBadHandshake) {
			t.Errorf("%s: Dial = %v, want ErrBadHandshake", tc.name, err)
		}
		if c != nil {
			c.CloseNow()
		}
	}
	dialServed(t, e)
}

// dial-slow: a server that trickles its response holds a Dialer's
// connection until HandshakeTimeout (10 s by default) or the Dial's
// context ends, whichever is first; its loop serves others meanwhile.
func limitDialSlow(t *testing.T) {
	if websocket.DefaultHandshakeTimeoutForTest != 10*time.Second {
		t.Errorf("the default HandshakeTimeout is %v, want 10s as documented", websocket.DefaultHandshakeTimeoutForTest)
	}
	const timeout = 500 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		resp := "HTTP/1.1 101 Switching Protocols\r\n" + strings.Repeat("X-Slow: s\r\n", 1000)
		for i := 0; i < len(resp); i++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := nc.Write([]byte{resp[i]}); err != nil {
				return
			}
		}
	}()
	e := dialEngine(t)
	d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: e}, HandshakeTimeout: timeout}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		c, _, err := d.Dial(context.Background(), "ws://"+ln.Addr().String()+"/")
		if c != nil {
			c.CloseNow()
		}
		done <- err
	}()
	dialServed(t, e)
	if err := recv(t, done); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial = %v, want the handshake timeout", err)
	}
	if d := time.Since(start); d > 10*timeout {
		t.Errorf("Dial took %v, with HandshakeTimeout %v", d, timeout)
	}
}

// dial-read-limit: a Dialer's connection has the server's bounds, the
// read limit among them: a hostile server's frame declaring more than
// ReadLimit closes the connection with 1009 at its header.
func limitDialReadLimit(t *testing.T) {
	e := dialEngine(t)
	url, conns := rawServer(t, ok101())
	cli := newRecorder(false)
	dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e}}, url)
	rc := recv(t, conns)
	defer rc.nc.Close() // (and keeps it from the garbage collector, whose finalizer would close it)
	cli.expect(t, "open")
	rc.send(frameHeader(0x82, websocket.DefaultReadLimit+1, false))
	rc.expectClose(1009)
	if ev := cli.expect(t, "close"); !errors.Is(ev.err, websocket.ErrReadLimit) {
		t.Errorf("OnClose(%v), want ErrReadLimit", ev.err)
	}
	dialServed(t, e)
}

// dial-close-wait: once the close frames are exchanged, a client waits
// for the server to close the TCP connection (RFC 6455 §7.1.1), for
// CloseTimeout at most.
func limitDialCloseWait(t *testing.T) {
	const timeout = 300 * time.Millisecond
	e := dialEngine(t)
	url, conns := rawServer(t, ok101())
	cli := newRecorder(false)
	c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e, CloseTimeout: timeout}}, url)
	rc := recv(t, conns)
	defer rc.nc.Close() // (and keeps it from the garbage collector, whose finalizer would close it)
	cli.expect(t, "open")
	start := time.Now()
	c.Close(websocket.StatusNormalClosure, "")
	if f, err := rc.read(); err != nil || f.op() != 8 {
		t.Fatalf("read %s, %v; want the client's close frame", brief(f), err)
	}
	rc.frame(0x88, false, closePayload(1000, "")) // answered, and the TCP connection kept open
	dialServed(t, e)
	ev := cli.expect(t, "close")
	if websocket.CloseStatus(ev.err) != websocket.StatusNormalClosure {
		t.Errorf("OnClose(%v), want the server's 1000", ev.err)
	}
	if d := time.Since(start); d < timeout || d > 10*timeout {
		t.Errorf("closed after %v, want CloseTimeout (%v)", d, timeout)
	}
}
