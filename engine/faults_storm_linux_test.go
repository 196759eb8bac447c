package engine_test

// Storms of injected system-call failures (internal/testkit/faulttest) on the
// engine's reads, writes and accepts, on every backend: transient errnos
// are retried without a trace, resource errnos end one connection with a
// clear error or make the listener back off.

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
)

// etStormBytes is what each client streams while a storm lasts: small
// enough for the socket buffers to hold it all, so that no client blocks
// on a server that waits for readiness.
const etStormBytes = 48 << 10

// TestStormTransient checks that storms of EINTR and EAGAIN, every 2nd
// to 10th read, write and accept, are invisible: every connection is
// accepted, echoes every byte in order, and stays open. The clients make
// many small round trips, so the storm meets every path. EINTR (and, on
// io_uring, EAGAIN: the kernel may complete an operation with it) is
// retried at once, so every round trip completes during the storm. On
// epoll EAGAIN means "wait for the next edge": the kernel never returns it
// while data or space is there, so an injected one holds the socket until
// more traffic arrives: there a client that waited 20 ms for its echo
// sends its next message anyway, and after the storm one more connection
// and a message on every connection bring the last edges.
func TestStormTransient(t *testing.T) { backendtest.Run(t, testStormTransient) }

func testStormTransient(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, errno := range []syscall.Errno{unix.EINTR, unix.EAGAIN} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{})
			storm := faulttest.Start(t, faulttest.Storm{Errno: errno, MinGap: 2, MaxGap: 10})
			a := etListen(t, e, "tcp")
			cs := etEchoClients(t, a, 4, 1)
			immediate := errno == unix.EINTR || etBackend(e) == backend.IOURing
			if err := etRounds(cs, 100, immediate); err != nil {
				t.Error(err)
			}
			storm.Stop()
			cs = append(cs, etEchoClients(t, a, 1, 100)...)
			etSendAll(cs, 1<<10)
			for i, c := range cs {
				if !c.Wait(etWait) {
					t.Fatalf("client %d: %d of %d bytes echoed (reader: %v)", i, c.Got(), c.Sent(), c.Err())
				}
			}
			if storm.Hits() == 0 {
				t.Fatalf("no failure injected in %d calls", storm.Calls())
			}
			for range cs {
				etOpened(t, h)
			}
			etNoEvent(t, h.closed, "OnClose")
			t.Logf("%d of %d calls failed with %s", storm.Hits(), storm.Calls(), unix.ErrnoName(errno))
		})
	}
}

// etRounds makes every client, each on its own goroutine, send rounds
// messages of 1 to 2 KiB, each after the echo of the one before. With
// immediate, every echo must come back (within etWait); otherwise a
// client waits 20 ms for it and goes on, its next message bringing the
// edge a held socket waits for.
func etRounds(cs []*faulttest.Echo, rounds int, immediate bool) error {
	wait := 20 * time.Millisecond
	if immediate {
		wait = etWait
	}
	errs := make(chan error, len(cs))
	for i, c := range cs {
		go func() {
			for r := range rounds {
				if err := c.Send(1<<10+(r*331)%(1<<10), etWait); err != nil {
					errs <- fmt.Errorf("client %d, round %d: Send = %v", i, r, err)
					return
				}
				if !c.Wait(wait) && immediate {
					errs <- fmt.Errorf("client %d, round %d: %d of %d bytes echoed (reader: %v), want all: the errno is retried at once", i, r, c.Got(), c.Sent(), c.Err())
					return
				}
			}
			errs <- nil
		}()
	}
	var err error
	for range cs {
		err = errors.Join(err, <-errs)
	}
	return err
}

// TestStormConnErrors checks that ENOMEM and ENOBUFS from one
// connection's reads or writes end that connection, and only it: OnClose
// reports the error as a *net.OpError of the call around an
// *os.SyscallError, its peer reads an exact prefix of its echo and then
// the end, and the other connections echo every byte. On io_uring an
// ENOBUFS ending a provided-buffer receive means the buffer ring ran dry
// (io_uring's ABI), which the backend re-arms: there the receive is
// retried and the connection goes on.
func TestStormConnErrors(t *testing.T) { backendtest.Run(t, testStormConnErrors) }

func testStormConnErrors(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, op := range []string{"read", "write"} {
		for _, errno := range []syscall.Errno{unix.ENOMEM, unix.ENOBUFS} {
			t.Run(op+"/"+unix.ErrnoName(errno), func(t *testing.T) {
				etStormConn(t, op, errno)
			})
		}
	}
}

func etStormConn(t *testing.T, op string, errno syscall.Errno) {
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{})
	a := etListen(t, e, "tcp")
	cs := etEchoClients(t, a, 3, 10)
	target := etOpenedFrom(t, h, cs[0].Conn(), len(cs))
	etSendAll(cs, 1<<10) // all attached and echoing
	for _, c := range cs {
		c.Wait(etWait)
	}
	fop := faulttest.Read
	if op == "write" {
		fop = faulttest.Write
	}
	// From the first call on, every other one: the whole stream may take
	// a single read and a single write.
	storm := faulttest.Start(t, faulttest.Storm{Errno: errno, Ops: []faulttest.Op{fop}, MinGap: 1, MaxGap: 2,
		Peers: []net.Addr{cs[0].Conn().LocalAddr()}})
	etSendAll(cs, etStormBytes) // the target's writes may fail: it is reset
	retried := op == "read" && errno == unix.ENOBUFS && etBackend(e) == backend.IOURing
	if retried {
		if !cs[0].Wait(etWait) {
			t.Fatalf("target: %d of %d bytes echoed (reader: %v), want all: ENOBUFS from the ring is retried", cs[0].Got(), cs[0].Sent(), cs[0].Err())
		}
		etNoEvent(t, h.closed, "OnClose")
	} else {
		etCheckConnError(t, h, target, op, errno)
		if err := cs[0].Ended(etWait); err == nil || errors.Is(err, faulttest.ErrMismatch) {
			t.Fatalf("target's peer: %v after %d of %d bytes, want the end of an exact prefix of its echo", err, cs[0].Got(), cs[0].Sent())
		}
	}
	for i, c := range cs[1:] {
		if !c.Wait(etWait) {
			t.Errorf("client %d: %d of %d bytes echoed (reader: %v)", i+1, c.Got(), c.Sent(), c.Err())
		}
	}
	etNoEvent(t, h.closed, "OnClose of another connection")
	if storm.Hits() == 0 {
		t.Errorf("no failure injected in %d calls", storm.Calls())
	}
	t.Logf("%d %s failures injected; target echoed %d of %d bytes", storm.Hits(), unix.ErrnoName(errno), cs[0].Got(), cs[0].Sent())
}

// etOpenedFrom waits for n OnOpens and returns the engine's end of peer.
func etOpenedFrom(t *testing.T, h *etHandler, peer net.Conn, n int) *engine.Conn {
	t.Helper()
	var found *engine.Conn
	for range n {
		if c := etOpened(t, h); c.RemoteAddr().String() == peer.LocalAddr().String() {
			found = c
		}
	}
	if found == nil {
		t.Fatalf("no OnOpen for the connection from %v", peer.LocalAddr())
	}
	return found
}

// etCheckConnError waits for c's OnClose and checks its error: op's
// *net.OpError around an *os.SyscallError matching errno.
func etCheckConnError(t *testing.T, h *etHandler, c *engine.Conn, op string, errno syscall.Errno) {
	t.Helper()
	ev := etClosed(t, h)
	var oe *net.OpError
	var se *os.SyscallError
	switch {
	case ev.c != c:
		t.Fatalf("OnClose of %p, want the target %p", ev.c, c)
	case !errors.As(ev.err, &oe) || oe.Op != op:
		t.Fatalf("OnClose(err = %v), want a *net.OpError of %q", ev.err, op)
	case !errors.As(ev.err, &se) || !errors.Is(ev.err, errno):
		t.Fatalf("OnClose(err = %v), want an *os.SyscallError of %s", ev.err, unix.ErrnoName(errno))
	}
}

// TestStormAccept checks the listener against accept failing for
// resources (EMFILE, ENFILE, ENOMEM, ENOBUFS, injected: ENFILE cannot be
// reached for real in a test): during an outage it backs off (5 ms
// doubling) instead of spinning on the waiting connections, which a
// count of accept calls shows; during a storm (every 2nd to 10th call
// fails) and after, every connection is accepted and served.
func TestStormAccept(t *testing.T) { backendtest.Run(t, testStormAccept) }

func testStormAccept(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, errno := range []syscall.Errno{unix.EMFILE, unix.ENFILE, unix.ENOMEM, unix.ENOBUFS} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{Loops: 1})
			// From the listener's first accept: an io_uring multishot
			// accept already running would take the first connection.
			storm := faulttest.Start(t, faulttest.Storm{Errno: errno, Ops: []faulttest.Op{faulttest.Accept}, MinGap: 1, MaxGap: 1})
			a := etListen(t, e, "tcp")
			cs := etEchoClients(t, a, 3, 20) // connected in the backlog
			const outage = 250 * time.Millisecond
			time.Sleep(outage)
			calls := storm.Calls()
			// 5+10+20+40+80 ms of back-off fit in 250 ms: about 6 calls.
			// A listener that retried at once would make thousands.
			if calls < 2 || calls > 12 {
				t.Errorf("%d accept calls during a %v outage, want 2 to 12 (back-off)", calls, outage)
			}
			etNoEvent(t, h.opened, "OnOpen during the outage")
			if n := e.Stats().Total().AcceptErrors; n != uint64(storm.Hits()) {
				t.Errorf("AcceptErrors = %d, want the %d failures", n, storm.Hits())
			}

			storm.Stop()
			storm = faulttest.Start(t, faulttest.Storm{Errno: errno, Ops: []faulttest.Op{faulttest.Accept}, MinGap: 2, MaxGap: 10})
			cs = append(cs, etEchoClients(t, a, 12, 30)...)
			etSendAll(cs, 1<<10)
			for i, c := range cs {
				if !c.Wait(etWait) {
					t.Fatalf("client %d: %d of %d bytes echoed (reader: %v)", i, c.Got(), c.Sent(), c.Err())
				}
			}
			for range cs {
				etOpened(t, h)
			}
			t.Logf("outage: %d accept calls in %v; storm: %d of %d failed", calls, outage, storm.Hits(), storm.Calls())
		})
	}
}
