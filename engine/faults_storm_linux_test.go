package engine_test

// Storms of injected system-call failures (internal/testkit/faulttest) on the
// engine's reads, writes and accepts, on every backend: transient errnos
// are retried without a trace, resource errnos end one connection with a
// clear error or make the listener back off.

import (
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

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
// and a message on every connection bring the last edges. The clients are
// stresstest.StormTransient's.
func TestStormTransient(t *testing.T) { backendtest.Run(t, testStormTransient) }

func testStormTransient(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, errno := range []syscall.Errno{unix.EINTR, unix.EAGAIN} {
		t.Run(unix.ErrnoName(errno), func(t *testing.T) {
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{})
			storm := faulttest.Start(t, faulttest.Storm{Errno: errno, MinGap: 2, MaxGap: 10})
			a := etListen(t, e, "tcp")
			immediate := errno == unix.EINTR || etBackend(e) == backend.IOURing
			for range stresstest.StormTransient(t, a, storm, immediate) {
				etOpened(t, h)
			}
			etNoEvent(t, h.closed, "OnClose")
		})
	}
}

// TestStormConnErrors checks that ENOMEM and ENOBUFS from one
// connection's reads or writes end that connection, and only it: OnClose
// reports the error as a *net.OpError of the call around an
// *os.SyscallError, its peer reads an exact prefix of its echo and then
// the end, and the other connections echo every byte. On io_uring an
// ENOBUFS ending a provided-buffer receive means the buffer ring ran dry
// (io_uring's ABI), which the backend re-arms: there the receive is
// retried and the connection goes on. The clients are
// stresstest.StormConn's.
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
	fop, retry := faulttest.Read, stresstest.NoRetry
	if op == "write" {
		fop = faulttest.Write
	}
	if op == "read" && errno == unix.ENOBUFS && etBackend(e) == backend.IOURing {
		retry = stresstest.MustRetry
	}
	cs, retried := stresstest.StormConn(t, a, fop, errno, retry)
	target := etOpenedFrom(t, h, cs[0].Conn(), len(cs))
	if !retried {
		etCheckConnError(t, h, target, op, errno)
	}
	etNoEvent(t, h.closed, "OnClose of another connection")
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
	if ev.c != c {
		t.Fatalf("OnClose of %p, want the target %p", ev.c, c)
	}
	if err := stresstest.CheckOpError(ev.err, op, errno); err != nil {
		t.Fatalf("OnClose(err = %v)", err)
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
			cs := stresstest.EchoClients(t, a, 3, 20) // connected in the backlog
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
			cs = append(cs, stresstest.EchoClients(t, a, 12, 30)...)
			stresstest.EchoRound(t, cs, "during the storm")
			for range cs {
				etOpened(t, h)
			}
			t.Logf("outage: %d accept calls in %v; storm: %d of %d failed", calls, outage, storm.Hits(), storm.Calls())
		})
	}
}
