package engine_test

// TestLimits' sub-tests about connections themselves: how long a peer
// can keep one (idle, closing, half-closed, reset, at shutdown), what one
// costs in goroutines and timers, and what the loop gives a peer that
// floods it, opens and closes connections without end, or sends
// datagrams from many sources.

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// testLimitsIdle: clients that connect and then send nothing hold a
// connection each until Options.IdleTimeout (nothing read or written for
// that long) ends it; clients that only listen (the server writes to
// them, they send nothing) until Options.ReadIdleTimeout (nothing read).
// OnDeadline, then OnClose, get ErrIdleTimeout. Neither is set by default
// (nor is net/http's IdleTimeout, which falls back to ReadTimeout, 0), so
// by default such clients are held as long as they keep the connection.
// The well-behaved client, active throughout, is not cut.
func testLimitsIdle(t *testing.T) {
	const n, idle = 100, 10 * time.Second
	for _, tc := range []struct {
		name   string
		o      engine.Options
		listen bool // the server writes to the idle clients at each step
	}{
		{"IdleTimeout", engine.Options{IdleTimeout: idle}, false},
		{"ReadIdleTimeout", engine.Options{ReadIdleTimeout: idle}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := engine.NewManualClock(etT0)
			h := etEchoHandler()
			o := tc.o
			o.Loops = 1
			e := etStart(t, h, engine.WithClock(o, clk))
			a := etListen(t, e, "tcp")
			good := etDial(t, a)
			gc := etOpened(t, h)
			stresstest.DialMany(t, a, n, etWait)
			var cs []*engine.Conn
			for range n {
				cs = append(cs, etOpened(t, h))
			}
			step := func(d time.Duration) {
				if tc.listen {
					for _, c := range cs {
						c.Write([]byte("."))
					}
				}
				etStep(e, clk, d)
			}
			step(idle / 2)
			limServed(t, good, 1<<10, "beside idle clients")
			step(idle/2 - time.Millisecond)
			etNoEvent(t, h.closed, "OnClose before the idle timeout")
			step(time.Millisecond)
			for range n {
				ev := etClosed(t, h)
				if ev.c == gc || !errors.Is(ev.err, engine.ErrIdleTimeout) {
					t.Fatalf("OnClose(%p, %v), want an idle client's with ErrIdleTimeout (the good one is %p)", ev.c, ev.err, gc)
				}
			}
			if got := e.Stats().Total().Conns; got != 1 {
				t.Errorf("Conns = %d after the idle timeout, want 1 (the well-behaved client)", got)
			}
			limServed(t, good, 1<<10, "after the idle clients were cut")
		})
	}
}

// testLimitsClosing: a connection the server closes (Conn.Close, the
// Close action) is held until its queued output is written, so a client
// that stops reading holds it, with that output (at most MaxWriteBuffer
// and one Write), until a write deadline or an idle timeout ends it; for
// ever without one, as a net/http handler is held by a Write blocked on a
// client that does not read. Here the handler answers "Q" with more than
// the kernel's buffers take, and closes; with IdleTimeout the close is cut once its output has not moved
// for that long: OnClose gets ErrIdleTimeout, the queue is dropped.
func testLimitsClosing(t *testing.T) {
	const idle = 10 * time.Second
	clk := engine.NewManualClock(etT0)
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if bytes.HasPrefix(in.Bytes(), []byte("Q")) {
			in.Discard(in.Len())
			// A reply the kernel's buffers cannot take at once: 256 KiB
			// of it queued.
			for i := 0; c.OutboundBuffered() < 256<<10 && i < 1024; i++ {
				c.Write(etChunk64K)
			}
			return engine.Close
		}
		return etEcho(c, in)
	}
	e := etStart(t, h, engine.WithClock(engine.Options{Loops: 1, IdleTimeout: idle}, clk))
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	bad := etDial(t, a)
	etSmallReadBuffer(bad)
	c := etOpened(t, h)
	bad.Write([]byte("Q"))
	etWaitFor(t, "the reply queued", func() bool { return c.OutboundBuffered() > 0 })
	for at := time.Duration(0); at < 3*idle; at += time.Second {
		limServed(t, good, 1<<10, "beside a close held by its unread output")
		etStep(e, clk, time.Second)
		select {
		case ev := <-h.closed:
			if ev.c != c || !errors.Is(ev.err, engine.ErrIdleTimeout) {
				t.Fatalf("OnClose(%p, %v), want (%p, ErrIdleTimeout)", ev.c, ev.err, c)
			}
			if at+time.Second < idle {
				t.Fatalf("the close was cut after %v, before its output stalled for IdleTimeout %v", at+time.Second, idle)
			}
			if q := e.Stats().Queued; q != 0 {
				t.Errorf("Stats().Queued = %d after the close was cut, want 0", q)
			}
			limServed(t, good, 1<<10, "after the close was cut")
			return
		default:
		}
	}
	t.Fatalf("a close held by unread output was not cut %v after its output stalled, with IdleTimeout %v", 3*idle, idle)
}

// testLimitsHalfClose: clients that send a request and shut down their
// sending side (FIN) without reading: the engine reads the end of file,
// writes what it queued (the echo) and closes with io.EOF, as net/http
// does; a HalfCloser handler may keep such connections open instead.
// Nothing stays once the output is with the kernel (output a client does
// not read is the closing row's).
func testLimitsHalfClose(t *testing.T) {
	const n = 50
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	for range n {
		p := etDial(t, a)
		etOpened(t, h)
		p.Write(limLine)
		p.(*net.TCPConn).CloseWrite()
	}
	for range n {
		if ev := etClosed(t, h); ev.err != io.EOF {
			t.Errorf("OnClose(err = %v) of a half-closed client, want io.EOF", ev.err)
		}
	}
	limServed(t, good, 1<<10, "after half-closed clients")
	etWaitFor(t, "nothing left of the half-closed clients", func() bool {
		s := e.Stats() // the good client's echo may still be queued a moment on io_uring
		return s.Total().Conns == 1 && s.Queued == 0
	})
}

// testLimitsReset: a client that resets its connection (RST) while the
// server has output queued for it: the connection closes at once, its
// queue dropped; OnClose gets the *net.OpError of the failed send or
// receive, and Stats().Queued and Paused go back to 0.
func testLimitsReset(t *testing.T) {
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	bad := etDial(t, a)
	etSmallReadBuffer(bad)
	c := etOpened(t, h)
	etFill(t, c, 1<<20)
	etWaitFor(t, "reading paused", func() bool { return e.Stats().Total().Paused == 1 })
	limServed(t, good, 1<<10, "beside a client that does not read")
	bad.(*net.TCPConn).SetLinger(0)
	bad.Close()
	ev := etClosed(t, h)
	var oe *net.OpError
	if ev.c != c || !errors.As(ev.err, &oe) {
		t.Errorf("OnClose(%p, %v) after a reset, want (%p, a *net.OpError)", ev.c, ev.err, c)
	}
	if s := e.Stats(); s.Queued != 0 || s.Total().Paused != 0 {
		t.Errorf("Queued = %d, Paused = %d after the reset, want 0, 0", s.Queued, s.Total().Paused)
	}
	limServed(t, good, 1<<10, "after a reset")
}

// testLimitsGoroutines: a connection holds no goroutine on epoll and
// io_uring, whatever its peer does: 200 clients, each with a partial line
// held, add none (net/http: one each, with at least 8 KiB of stack and a
// 4 KiB read buffer). On the net backend a connection waiting for input
// holds one, package net's blocking Read.
func testLimitsGoroutines(t *testing.T) {
	const n = 200
	h := &etCountServer{data: etLineEcho}
	e := etStartCount(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	limServedLine(t, good, "before")
	before := runtime.NumGoroutine()
	in0 := e.Stats().Total().BytesIn
	for _, p := range stresstest.DialMany(t, a, n, etWait) {
		p.Write([]byte("partial"))
	}
	etWaitFor(t, "every partial line received", func() bool {
		s := e.Stats().Total()
		return s.Conns == n+1 && s.BytesIn-in0 == n*uint64(len("partial"))
	})
	limServedLine(t, good, "beside clients holding partial lines")
	extra := runtime.NumGoroutine() - before
	t.Logf("%d connections with a partial line each: %d more goroutines", n, extra)
	limit := 4 // the runtime's and the test's own, now and then
	if backendtest.OnNet() {
		limit += n
	}
	if extra > limit {
		t.Errorf("%d connections hold %d goroutines, want at most %d", n, extra, limit)
	}
}

// testLimitsTimers: a connection has at most three timers (read deadline,
// write deadline, idle), on its loop's heap: no runtime timer. A client
// can make a handler arm its deadlines, here at every OnData, but not
// add more: more requests re-arm the same ones, and they go with the
// connection.
func testLimitsTimers(t *testing.T) {
	const n = 100
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		at := time.Now().Add(time.Hour)
		c.SetReadDeadline(at) // a deadline per request, as servers set
		c.SetWriteDeadline(at)
		return etEcho(c, in)
	}
	e := etStart(t, h, engine.Options{Loops: 1, IdleTimeout: time.Hour})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	limServed(t, good, 1<<10, "before")
	peers := stresstest.DialMany(t, a, n, etWait)
	for range n {
		etOpened(t, h)
	}
	for round := range 3 {
		for _, p := range peers {
			p.Write([]byte{byte(round)})
		}
		etWaitFor(t, "three timers a connection", func() bool { return e.Stats().Total().Timers == 3*(n+1) })
	}
	limServed(t, good, 1<<10, "beside clients whose requests arm timers")
	if got := e.Stats().Total().Timers; got != 3*(n+1) {
		t.Errorf("Timers = %d, want %d: three a connection", got, 3*(n+1))
	}
	for _, p := range peers {
		p.Close()
	}
	etWaitFor(t, "the timers gone with their connections", func() bool { return e.Stats().Total().Timers == 3 })
}

// testLimitsFlood: a client that sends as fast as TCP lets it, and reads
// the echo: its connection is read one ReadBufferSize (64 KiB) at a time,
// into the loop's one read buffer, in turn with the loop's other
// connections, so it takes its share of the loop and no more, and holds
// no buffer of its own. The well-behaved client's round trips stay under
// limServe.
func testLimitsFlood(t *testing.T) {
	const rbuf = 64 << 10
	var most atomic.Int64 // the largest OnData input of the flooding client
	h := etNewHandler()
	var flood atomic.Pointer[engine.Conn]
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if c == flood.Load() && int64(in.Len()) > most.Load() {
			most.Store(int64(in.Len()))
		}
		return etEcho(c, in)
	}
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	bad := etDial(t, a)
	flood.Store(etOpened(t, h))
	bad.SetDeadline(time.Now().Add(etWait))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := bad.Write(etChunk64K); err != nil {
				return
			}
		}
	})
	wg.Go(func() { io.Copy(io.Discard, bad) })
	defer wg.Wait()
	defer bad.Close()
	defer close(stop)
	in0 := e.Stats().Total().BytesIn
	etWaitFor(t, "the flood under way", func() bool { return e.Stats().Total().BytesIn-in0 > 16<<20 })
	start := time.Now()
	for range 20 {
		limServed(t, good, 1<<10, "beside a flood")
	}
	t.Logf("20 round trips beside a flood in %v; the flood's largest OnData: %d bytes; %d MiB in",
		time.Since(start), most.Load(), (e.Stats().Total().BytesIn-in0)>>20)
	if m := most.Load(); m > rbuf {
		t.Errorf("the flooding client's OnData got %d bytes at once, want at most ReadBufferSize %d", m, rbuf)
	}
}

// testLimitsChurn: a client that opens and closes connections as fast as
// it can (half of them with a reset): each costs an accept, OnOpen and
// OnClose (or a counted accept error, for one reset before AcceptEx took
// it), and nothing stays after it: Conns goes back to the
// well-behaved client alone, and every descriptor is released (TestMain
// checks the process's).
func testLimitsChurn(t *testing.T) {
	const workers, each = 4, 100
	h := &etCountServer{}
	e := etStartCount(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	limServed(t, good, 1<<10, "before")
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				c, err := net.DialTimeout("tcp", a.String(), etWait)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				c.Write([]byte("x"))
				if (w+i)%2 == 0 {
					c.(*net.TCPConn).SetLinger(0)
				}
				c.Close()
			}
		})
	}
	for range 10 {
		limServed(t, good, 1<<10, "beside connection churn")
	}
	wg.Wait()
	if p := failed.Load(); p != nil {
		t.Fatalf("dial: %v", *p)
	}
	// Each connection is opened and closed, or (Windows) its accept
	// fails: an AcceptEx whose connection the peer reset first ends with
	// ECONNABORTED, where accept(2) returns the socket.
	etWaitFor(t, "every churned connection closed", func() bool {
		st := e.Stats().Total()
		return int(h.opens.Load())+int(st.AcceptErrors) == workers*each+1 && st.Conns == 1
	})
	limServed(t, good, 1<<10, "after connection churn")
}

// testLimitsShutdown: a client that does not read holds a graceful
// Shutdown until its context ends (the Shutdown action's bound is
// Options.ShutdownTimeout, 10 s by default), and is then cut: OnClose
// gets ErrEngineStopped and Shutdown the context's error. Meanwhile the
// other connections are drained and closed: the well-behaved client reads
// the end of its stream at once.
func testLimitsShutdown(t *testing.T) {
	const grace = 300 * time.Millisecond
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	bad := etDial(t, a)
	etSmallReadBuffer(bad)
	c := etOpened(t, h)
	etFill(t, c, 1<<20)
	limServed(t, good, 1<<10, "before the shutdown")
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	start := time.Now()
	done := etShutdown(ctx, e)
	good.SetReadDeadline(time.Now().Add(limServe))
	if n, err := good.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("the well-behaved client's read during the shutdown = %d, %v, want 0, io.EOF within %v", n, err, limServe)
	}
	err := etRecv(t, done, "Shutdown's return")
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || took < grace {
		t.Errorf("Shutdown = %v after %v, want context.DeadlineExceeded after %v: the client that does not read holds it", err, took, grace)
	}
	var cut bool
	for range 2 {
		if ev := etClosed(t, h); ev.c == c {
			cut = errors.Is(ev.err, engine.ErrEngineStopped)
		}
	}
	if !cut {
		t.Errorf("the client that does not read was not cut with ErrEngineStopped")
	}
}

// testLimitsUDP: a UDP socket is one Conn whatever its sources: a flood of
// datagrams from many sources holds nothing per source, one 64 KiB
// buffer serves the socket, and what the loop does not read in time the
// kernel drops (the socket's SO_RCVBUF), as for a net.PacketConn. A
// well-behaved UDP client, which retries as UDP clients do, and a TCP
// client on the same loop are served meanwhile.
func testLimitsUDP(t *testing.T) {
	const sources = 32
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	ua := etListen(t, e, "udp")
	etOpened(t, h)
	good := etDial(t, etListen(t, e, "tcp"))
	etOpened(t, h)
	var bad []*net.UDPConn
	for range sources {
		bad = append(bad, etDialUDP(t, ua))
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		msg := make([]byte, 1<<10)
		for {
			for _, b := range bad {
				select {
				case <-stop:
					return
				default:
				}
				b.Write(msg)
			}
		}
	})
	defer wg.Wait()
	defer close(stop)
	in0 := e.Stats().Total().BytesIn
	etWaitFor(t, "the flood under way", func() bool { return e.Stats().Total().BytesIn-in0 > 4<<20 })
	u := etDialUDP(t, ua)
	for i := range 5 {
		limUDPServed(t, u, i)
		limServed(t, good, 1<<10, "beside a datagram flood")
	}
	if n := e.Stats().Total().Conns; n != 2 {
		t.Errorf("Conns = %d with datagrams from %d sources, want 2 (the UDP socket and the TCP client)", n, sources+1)
	}
}

// limUDPServed checks that u, a well-behaved UDP client, gets its
// datagram echoed within limServe, sending it again every 50 ms as
// datagrams may be dropped.
func limUDPServed(t *testing.T, u *net.UDPConn, i int) {
	t.Helper()
	msg := []byte{'p', 'i', 'n', 'g', byte(i)}
	deadline := time.Now().Add(limServe)
	buf := make([]byte, 64)
	for time.Now().Before(deadline) {
		u.Write(msg)
		u.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		for {
			n, err := u.Read(buf)
			if err != nil {
				break // sent again
			}
			if bytes.Equal(buf[:n], msg) {
				return
			}
		}
	}
	t.Fatalf("a well-behaved UDP client got no echo within %v", limServe)
}
