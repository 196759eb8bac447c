//go:build unix

package engine_test

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// TestPeerReset checks that a peer resetting the connection while
// megabytes are queued for it ends the connection with the reset (or
// broken pipe) error, without a hang.
func TestPeerReset(t *testing.T) { backendtest.Run(t, testPeerReset) }

func testPeerReset(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etEchoHandler()
		e, c, peer := etServe(t, h, engine.Options{}, network)
		etFill(t, c, 2<<20)
		if tc, ok := peer.(*net.TCPConn); ok {
			tc.SetLinger(0) // close sends RST
		}
		peer.Close() // a unix peer closing with unread data resets too
		ev := etClosed(t, h)
		if !errors.Is(ev.err, syscall.ECONNRESET) && !errors.Is(ev.err, syscall.EPIPE) {
			t.Fatalf("OnClose(err = %v), want ECONNRESET or EPIPE", ev.err)
		}
		var oe *net.OpError
		if !errors.As(ev.err, &oe) {
			t.Errorf("OnClose(err = %T), want a *net.OpError", ev.err)
		}
		if _, err := c.Write([]byte("x")); err == nil {
			t.Errorf("Write after the reset = nil error")
		}
		etWaitFor(t, "empty queue", func() bool { return e.Stats().Queued == 0 && e.Stats().Total().Paused == 0 })
	})
}

// TestPeerHalfClose checks that when the peer shuts down its sending side
// after a request, the engine still writes the whole queued reply before
// closing with io.EOF. (The engine's own CloseWrite: TestCloseWrite.)
func TestPeerHalfClose(t *testing.T) { backendtest.Run(t, testPeerHalfClose) }

func testPeerHalfClose(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		reply := etPattern(3 << 20)
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			if _, err := in.ReadUntil('\n'); err == nil {
				c.Write(reply)
			}
			return engine.None
		}
		_, _, peer := etServe(t, h, engine.Options{}, network)
		peer.Write([]byte("request\n"))
		if err := peer.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		got := etReadAll(t, peer)
		if len(got) != len(reply) || etCheckPattern(got) >= 0 {
			t.Fatalf("peer read %d bytes (difference at %d), want the %d of the reply", len(got), etCheckPattern(got), len(reply))
		}
		if ev := etClosed(t, h); !errors.Is(ev.err, io.EOF) {
			t.Errorf("OnClose(err = %v), want io.EOF", ev.err)
		}
	})
}

// TestSlowReader checks that output to a peer reading slowly arrives
// complete and in order, with reading paused and resumed on the way.
func TestSlowReader(t *testing.T) { backendtest.Run(t, testSlowReader) }

func testSlowReader(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		out := etPattern(12 << 20)
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			in.Discard(in.Len())
			for off := 0; off < len(out); off += 64 << 10 {
				if _, err := c.Write(out[off:min(off+64<<10, len(out))]); err != nil {
					t.Errorf("Write at %d: %v", off, err)
					return engine.Close
				}
			}
			return engine.Close
		}
		_, _, peer := etServe(t, h, engine.Options{WriteHighWater: 256 << 10}, network)
		peer.Write([]byte("go"))
		peer.SetReadDeadline(time.Now().Add(etWait))
		got := make([]byte, 0, len(out))
		buf := make([]byte, 4<<10)
		for {
			n, err := peer.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("Read after %d bytes: %v", len(got), err)
			}
			if len(got)%(1<<20) < n {
				time.Sleep(2 * time.Millisecond) // slow: a pause every MiB
			}
		}
		if len(got) != len(out) || etCheckPattern(got) >= 0 {
			t.Fatalf("peer read %d bytes (difference at %d), want %d", len(got), etCheckPattern(got), len(out))
		}
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose(err = %v), want nil", ev.err)
		}
	})
}

// etEMFILE makes the first N accepts of a backend fail with EMFILE: the
// real accept's descriptor is closed and the completion rewritten. It
// counts Accept submissions.
type etEMFILE struct {
	poller.Backend
	fail    *atomic.Int32
	submits *atomic.Int64
}

func (b etEMFILE) Accept(tag poller.Tag) {
	b.submits.Add(1)
	b.Backend.Accept(tag)
}

func (b etEMFILE) Wait(timeout time.Duration, fn func(*poller.Completion)) error {
	return b.Backend.Wait(timeout, func(p *poller.Completion) {
		if p.Op == poller.OpAccept && p.Err == 0 && b.fail.Add(-1) >= 0 {
			unix.Close(p.N)
			q := *p
			q.N, q.Err, q.From = 0, unix.EMFILE, nil
			fn(&q)
			return
		}
		fn(p)
	})
}

// TestAcceptEMFILE checks that a listener whose accept fails for want of
// descriptors backs off (5, 10, 20 ms on the engine's clock) without
// trying again in between, counts the failures, and then accepts again.
func TestAcceptEMFILE(t *testing.T) { backendtest.Run(t, testAcceptEMFILE) }

func testAcceptEMFILE(t *testing.T) {
	const failures = 3
	var fail atomic.Int32
	var submits atomic.Int64
	fail.Store(failures)
	clk := engine.NewManualClock(etT0)
	o := engine.WithBackend(engine.WithClock(engine.Options{Loops: 1}, clk), func(b poller.Backend) poller.Backend {
		return etEMFILE{b, &fail, &submits}
	})
	h := etEchoHandler()
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	e.Poke()
	if n := submits.Load(); n != 1 {
		t.Fatalf("%d accepts submitted by a new listener, want 1", n)
	}
	var peers []net.Conn
	for range failures + 1 {
		peers = append(peers, etDial(t, a))
	}
	acceptErrors := func() uint64 { return e.Stats().Total().AcceptErrors }
	etWaitFor(t, "the first EMFILE", func() bool { return acceptErrors() >= 1 })
	if n := acceptErrors(); n != 1 {
		t.Fatalf("AcceptErrors = %d right after the first EMFILE, want 1: the listener tried again without backing off", n)
	}

	backoff := 5 * time.Millisecond
	for i := 1; i <= failures; i++ {
		// Nothing is tried before the back-off has passed.
		n := submits.Load()
		for range 3 {
			e.Poke()
		}
		etStep(e, clk, backoff-time.Microsecond)
		if got := submits.Load(); got != n {
			t.Fatalf("after EMFILE %d: %d accepts submitted within the %v back-off", i, got-n, backoff)
		}
		etStep(e, clk, time.Microsecond)
		want := int64(1) // fails again
		if i == failures {
			// It succeeds, and the next is submitted as soon as the
			// completion is handled: at once where the accept was tried
			// at submission, a moment later on the net backend's worker.
			want = 2
			etWaitFor(t, "the accept after the last back-off", func() bool { return submits.Load() >= n+want })
		}
		if got := submits.Load(); got != n+want {
			t.Fatalf("after EMFILE %d and its %v back-off: %d accepts submitted, want %d", i, backoff, got-n, want)
		}
		if i < failures {
			etWaitFor(t, "the next EMFILE", func() bool { return acceptErrors() == uint64(i+1) })
		}
		backoff *= 2
	}
	c := etOpened(t, h)
	if got, want := c.RemoteAddr().String(), peers[failures].LocalAddr().String(); got != want {
		t.Errorf("accepted %s, want the connection after the failed ones, %s", got, want)
	}
	etEchoes(t, peers[failures], "accepted after the back-off")
	if n := acceptErrors(); n != failures {
		t.Errorf("AcceptErrors = %d, want %d", n, failures)
	}
	// No back-off any more.
	etEchoes(t, etDial(t, a), "accepted at once")
}

// etAddFails makes the backend's Add fail while fail is set.
type etAddFails struct {
	poller.Backend
	fail *atomic.Bool
}

func (b etAddFails) Add(fd int, tag poller.Tag, stream bool) error {
	if b.fail.Load() {
		return unix.ENOMEM
	}
	return b.Backend.Add(fd, tag, stream)
}

// TestWriteAfterFailedAttach checks a connection whose registration with
// the loop failed: OnClose reports it, and Write then fails with
// net.ErrClosed instead of writing to a descriptor number that was closed
// (and that the process may have reused for another file).
func TestWriteAfterFailedAttach(t *testing.T) { backendtest.Run(t, testWriteAfterFailedAttach) }

func testWriteAfterFailedAttach(t *testing.T) {
	var fail atomic.Bool
	o := engine.WithBackend(engine.Options{Loops: 1}, func(b poller.Backend) poller.Backend {
		return etAddFails{b, &fail}
	})
	h := etNewHandler()
	e := etStart(t, h, o)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := etDial(t, ln.Addr())
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	fail.Store(true)
	c, err := e.Adopt(nc)
	if err != nil {
		t.Fatalf("Adopt = %v", err)
	}
	ev := etClosed(t, h)
	fail.Store(false)
	if ev.c != c || ev.err == nil {
		t.Fatalf("OnClose(%p, %v), want (%p, the attach error)", ev.c, ev.err, c)
	}
	etExpectEOF(t, peer)
	if _, err := c.Write([]byte("stray")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after a failed attach = %v, want net.ErrClosed", err)
	}
}

// TestLoopFault makes one loop's backend fail. The engine must not go on
// as if nothing happened: every connection, on that loop and the others,
// gets its OnClose, the engine stops (Done, OnShutdown), and Err reports
// the failure. The loop used to end silently, its connections left open
// and never closed.
func TestLoopFault(t *testing.T) { backendtest.Run(t, testLoopFault) }

func testLoopFault(t *testing.T) {
	var fail atomic.Bool
	o := engine.WithBackend(engine.Options{Loops: 2}, faulttest.FailFirst(&fail))
	h := etEchoHandler()
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	var conns []*engine.Conn
	var peers []net.Conn
	for range 4 {
		peers = append(peers, etDial(t, a))
		conns = append(conns, etOpened(t, h))
	}
	fail.Store(true)
	for _, c := range conns {
		c.Wake() // the failing loop wakes and fails
	}
	select {
	case <-e.Done():
	case <-time.After(etWait):
		t.Fatal("the engine did not stop after a loop's backend failed")
	}
	if err := e.Err(); !errors.Is(err, faulttest.ErrBackend) {
		t.Errorf("Err() = %v, want the backend's failure", err)
	}
	faulted := 0
	for range conns {
		ev := etClosed(t, h)
		if ev.err == nil {
			t.Errorf("OnClose(nil) after a loop failure, want an error")
		}
		if errors.Is(ev.err, faulttest.ErrBackend) {
			faulted++
		}
	}
	if faulted == 0 {
		t.Error("no connection was closed with the backend's failure")
	}
	if n := h.shutdowns.Load(); n != 1 {
		t.Errorf("OnShutdown ran %d times, want 1", n)
	}
	for _, p := range peers {
		etExpectEOF(t, p)
	}
}
