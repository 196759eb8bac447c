package engine_test

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// etEchoServer runs a standard-library echo server on network and returns
// its address; the cleanup stops it and waits for its goroutines.
func etEchoServer(t *testing.T, network string) net.Addr {
	t.Helper()
	ln, err := net.Listen(network, etAddr(t, network))
	if err != nil {
		backendtest.SkipMissing(t, err)
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr()
}

// TestDial checks Dial to a standard echo server: OnOpen runs for the
// dialed conn, its out is sent, and the echo comes back to OnData.
func TestDial(t *testing.T) { backendtest.Run(t, testDial) }

func testDial(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		a := etEchoServer(t, network)
		got := make(chan string, 16)
		h := etNewHandler()
		h.open = func(*engine.Conn) ([]byte, engine.Action) { return []byte("hi there"), engine.None }
		h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
			if in.Len() < len("hi there") {
				return engine.None
			}
			got <- string(in.Bytes())
			in.Discard(in.Len())
			return engine.None
		}
		e := etStart(t, h, engine.Options{})
		c, err := e.Dial(network, a.String())
		if err != nil {
			t.Fatalf("Dial(%s, %s) = %v", network, a, err)
		}
		if o := etOpened(t, h); o != c {
			t.Fatalf("OnOpen(%p), want the dialed conn %p", o, c)
		}
		if s := etRecv(t, got, "echo"); s != "hi there" {
			t.Fatalf("OnData(%q), want the echo of out", s)
		}
		if c.RemoteAddr().String() != a.String() {
			t.Errorf("RemoteAddr() = %v, want %v", c.RemoteAddr(), a)
		}
		c.Close()
		if ev := etClosed(t, h); ev.c != c || ev.err != nil {
			t.Errorf("OnClose(%p, %v), want (%p, nil)", ev.c, ev.err, c)
		}
	})
}

// TestDialContext checks that a DialContext whose context has expired
// fails with the context's error and opens nothing, and that a live one
// connects.
func TestDialContext(t *testing.T) { backendtest.Run(t, testDialContext) }

func testDialContext(t *testing.T) {
	a := etEchoServer(t, "tcp")
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{})
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if c, err := e.DialContext(ctx, "tcp", a.String()); c != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("DialContext(expired) = %p, %v, want nil, context.DeadlineExceeded", c, err)
	}
	e.Poke()
	etNoEvent(t, h.opened, "OnOpen after a failed dial")
	ctx, cancel2 := context.WithTimeout(context.Background(), etWait)
	defer cancel2()
	c, err := e.DialContext(ctx, "tcp", a.String())
	if err != nil {
		t.Fatalf("DialContext = %v", err)
	}
	if o := etOpened(t, h); o != c {
		t.Fatalf("OnOpen(%p), want %p", o, c)
	}
}

// TestAdopt checks that a net.Conn accepted by a net.Listener can be moved
// onto the engine, which then serves it and closes the original.
func TestAdopt(t *testing.T) { backendtest.Run(t, testAdopt) }

func testAdopt(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		ln, err := net.Listen(network, etAddr(t, network))
		if err != nil {
			backendtest.SkipMissing(t, err)
			t.Fatal(err)
		}
		defer ln.Close()
		peer := etDial(t, ln.Addr())
		nc, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		h := etEchoHandler()
		e := etStart(t, h, engine.Options{})
		c, err := e.Adopt(nc)
		if err != nil {
			t.Fatalf("Adopt = %v", err)
		}
		if o := etOpened(t, h); o != c {
			t.Fatalf("OnOpen(%p), want the adopted conn %p", o, c)
		}
		if _, err := nc.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write on the adopted net.Conn = %v, want net.ErrClosed", err)
		}
		etEchoes(t, peer, "served by the engine")
		if c.LocalAddr().String() != peer.RemoteAddr().String() {
			t.Errorf("LocalAddr() = %v, want %v", c.LocalAddr(), peer.RemoteAddr())
		}
	})
}

// TestAdoptUnsupported checks that a connection without a descriptor is
// refused with an error matching errors.ErrUnsupported.
func TestAdoptUnsupported(t *testing.T) { backendtest.Run(t, testAdoptUnsupported) }

func testAdoptUnsupported(t *testing.T) {
	e := etStart(t, etNewHandler(), engine.Options{Loops: 1})
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if c, err := e.Adopt(a); c != nil || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Adopt(net.Pipe) = %p, %v, want nil, errors.ErrUnsupported", c, err)
	}
}

// TestDetach checks that Detach writes the queued output, then hands the
// connection over as a working net.Conn, and that OnClose gets
// ErrDetached.
func TestDetach(t *testing.T) { backendtest.Run(t, testDetach) }

func testDetach(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etEchoHandler()
		_, c, peer := etServe(t, h, engine.Options{}, network)
		etEchoes(t, peer, "before")
		out := etPattern(1 << 20)
		c.Write(out)
		read := make(chan []byte, 1)
		go func() {
			peer.SetReadDeadline(time.Now().Add(etWait))
			b := make([]byte, len(out)+len("back"))
			n, _ := io.ReadFull(peer, b)
			read <- b[:n]
		}()
		nc, err := c.Detach()
		if err != nil {
			t.Fatalf("Detach() = %v", err)
		}
		defer nc.Close()
		if ev := etClosed(t, h); ev.c != c || !errors.Is(ev.err, engine.ErrDetached) {
			t.Errorf("OnClose(%p, %v), want (%p, ErrDetached)", ev.c, ev.err, c)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after Detach = %v, want net.ErrClosed", err)
		}
		if _, err := c.Detach(); err == nil {
			t.Errorf("second Detach() = nil error, want one")
		}
		nc.Write([]byte("back"))
		b := etRecv(t, read, "the peer's read")
		if len(b) != len(out)+4 || etCheckPattern(b[:len(out)]) >= 0 || string(b[len(out):]) != "back" {
			t.Fatalf("peer read %d bytes, want the %d queued then \"back\"", len(b), len(out))
		}
		peer.Write([]byte("after"))
		etExpect(t, nc, "after")
		if nc.LocalAddr().String() != peer.RemoteAddr().String() {
			t.Errorf("detached LocalAddr() = %v, want %v", nc.LocalAddr(), peer.RemoteAddr())
		}
	})
}

// TestDetachKeepsArrivingBytes checks Detach's promise that bytes arriving
// while it hands the connection over, with output still queued, reach
// OnData or stay in the socket for the returned net.Conn (an upgrade whose
// client speaks the new protocol at once).
func TestDetachKeepsArrivingBytes(t *testing.T) { backendtest.Run(t, testDetachKeepsArrivingBytes) }

func testDetachKeepsArrivingBytes(t *testing.T) {
	const early = "first bytes of the new protocol"
	seen := make(chan string, 16)
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		seen <- string(in.Bytes())
		in.Discard(in.Len())
		return engine.None
	}
	_, c, peer := etServe(t, h, engine.Options{}, "unix")
	peer.Write([]byte("upgrade?"))
	etRecv(t, seen, "the upgrade request")
	out := etPattern(512 << 10) // more than the socket takes, less than WriteHighWater
	c.Write(out)
	etDo(t, c, func(*engine.Conn) {})
	if c.OutboundBuffered() == 0 {
		t.Fatal("nothing queued: the test needs output waiting when Detach starts")
	}
	type detached struct {
		nc  net.Conn
		err error
	}
	dc := make(chan detached, 1)
	go func() {
		nc, err := c.Detach()
		dc <- detached{nc, err}
	}()
	// The bytes arrive while the hand-over is under way (before it, or
	// during the drain of the queued output): in every order they must
	// reach OnData or the detached net.Conn.
	peer.Write([]byte(early))
	peer.SetReadDeadline(time.Now().Add(etWait))
	if n, err := io.ReadFull(peer, make([]byte, len(out))); err != nil {
		t.Fatalf("peer read %d of the %d queued bytes: %v", n, len(out), err)
	}
	d := etRecv(t, dc, "Detach")
	if d.err != nil {
		t.Fatalf("Detach() = %v", d.err)
	}
	nc := d.nc
	defer nc.Close()
	// The bytes must be somewhere: given to OnData before the hand-over,
	// or left in the socket for the net.Conn.
	select {
	case s := <-seen:
		if s != early {
			t.Fatalf("OnData(%q), want %q", s, early)
		}
		return
	default:
	}
	nc.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 64)
	n, err := nc.Read(b)
	if string(b[:n]) != early {
		t.Fatalf("detached conn Read = %q, %v, and OnData did not see them: bytes that arrived during Detach were lost", b[:n], err)
	}
}
