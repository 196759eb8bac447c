package aio_test

// Storms of injected system-call failures (internal/testkit/faulttest) on the
// watcher's reads and writes, on every backend: transient errnos are
// retried without a trace, resource errnos complete one connection's
// request with a clear error. (aio has no accept of its own: the caller
// accepts; see faults_emfile_linux_test.go for what it does at the descriptor
// limit.)

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
)

// fsBuffers names the two ways the server reads.
var fsBuffers = []struct {
	name string
	user bool
}{{"swap", false}, {"user", true}}

// TestStormTransient checks that storms of EINTR and EAGAIN, every 2nd
// to 10th read and write, are invisible to the watcher's user: every
// connection echoes every byte in order and no request fails. EINTR (and,
// on io_uring, EAGAIN: the kernel may complete an operation with it) is
// retried at once, so every round trip completes during the storm. On
// epoll EAGAIN means "wait for the next edge", which the kernel never
// returns while data or space is there: an injected one holds the socket
// until more traffic arrives, so a client that waited 20 ms for its echo
// sends its next message anyway, and after the storm a last message on
// every connection brings the last edges.
func TestStormTransient(t *testing.T) { backendtest.Run(t, testStormTransient) }

func testStormTransient(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, buf := range fsBuffers {
		for _, errno := range []syscall.Errno{unix.EINTR, unix.EAGAIN} {
			t.Run(buf.name+"/"+unix.ErrnoName(errno), func(t *testing.T) {
				s := startFSServer(t, buf.user)
				cs := fsClients(t, s, 4, 1)
				storm := faulttest.Start(t, faulttest.Storm{Errno: errno, MinGap: 2, MaxGap: 10})
				immediate := errno == unix.EINTR || s.w.Stats().Total().Backend == backend.IOURing
				if err := fsRounds(cs, 100, immediate); err != nil {
					t.Error(err)
				}
				storm.Stop()
				fsSendAll(cs, 1<<10)
				for i, c := range cs {
					if !c.Wait(waitTimeout) {
						t.Fatalf("client %d: %d of %d bytes echoed (reader: %v)", i, c.Got(), c.Sent(), c.Err())
					}
				}
				if storm.Hits() == 0 {
					t.Fatalf("no failure injected in %d calls", storm.Calls())
				}
				if n := s.errCount(); n != 0 {
					t.Errorf("%d connections failed, want none", n)
				}
				t.Logf("%d of %d calls failed with %s", storm.Hits(), storm.Calls(), unix.ErrnoName(errno))
			})
		}
	}
}

// TestStormConnErrors checks that ENOMEM and ENOBUFS from one
// connection's reads or writes complete that connection's request with
// the error, as a *net.OpError of the call around an *os.SyscallError,
// and touch nothing else: its peer reads an exact prefix of its echo, the
// other connections echo every byte. On io_uring an ENOBUFS ending a
// provided-buffer receive (swap-buffer reads that found nothing waiting)
// means the buffer ring ran dry (io_uring's ABI), which the backend
// re-arms: there the read is retried and the connection goes on.
func TestStormConnErrors(t *testing.T) { backendtest.Run(t, testStormConnErrors) }

func testStormConnErrors(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, buf := range fsBuffers {
		for _, op := range []aio.OpType{aio.OpRead, aio.OpWrite} {
			for _, errno := range []syscall.Errno{unix.ENOMEM, unix.ENOBUFS} {
				t.Run(fmt.Sprintf("%s/%v/%s", buf.name, op, unix.ErrnoName(errno)), func(t *testing.T) {
					fsStormConn(t, buf.user, op, errno)
				})
			}
		}
	}
}

func fsStormConn(t *testing.T, user bool, op aio.OpType, errno syscall.Errno) {
	s := startFSServer(t, user)
	cs := fsClients(t, s, 3, 10)
	fsSendAll(cs, 1<<10) // all delegated and echoing
	for _, c := range cs {
		c.Wait(waitTimeout)
	}
	fop := faulttest.Read
	if op == aio.OpWrite {
		fop = faulttest.Write
	}
	// From the first call on, every other one: the whole stream may take
	// a single read and a single write.
	storm := faulttest.Start(t, faulttest.Storm{Errno: errno, Ops: []faulttest.Op{fop}, MinGap: 1, MaxGap: 2,
		Peers: []net.Addr{cs[0].Conn().LocalAddr()}})
	fsSendAll(cs, 48<<10) // the target's writes may fail: it is reset
	target := cs[0]
	ring := s.w.Stats().Total().Backend == backend.IOURing
	// On io_uring a swap-buffer read is tried at once with read(2), where
	// ENOBUFS is the socket's error, as on epoll; only if nothing is
	// waiting does it go to the buffer ring, where ENOBUFS means the ring
	// ran dry and is retried. So there the storm may end the connection
	// or not: if every byte came back, the ring's retry took every hit.
	retried := op == aio.OpRead && errno == unix.ENOBUFS && ring && !user && target.Wait(waitTimeout)
	if !retried {
		if err := target.Ended(waitTimeout); err == nil || errors.Is(err, faulttest.ErrMismatch) {
			t.Fatalf("target's peer: %v after %d of %d bytes, want the end of an exact prefix of its echo (%d of %d calls failed; server: %v)", err, target.Got(), target.Sent(), storm.Hits(), storm.Calls(), s.errOf(target.Conn()))
		}
		fsCheckOpError(t, s.errOf(target.Conn()), op, errno)
	}
	for i, c := range cs[1:] {
		if !c.Wait(waitTimeout) {
			t.Errorf("client %d: %d of %d bytes echoed (reader: %v)", i+1, c.Got(), c.Sent(), c.Err())
		}
		if err := s.errOf(c.Conn()); err != nil {
			t.Errorf("client %d: the server's request failed: %v", i+1, err)
		}
	}
	if storm.Hits() == 0 {
		t.Errorf("no failure injected in %d calls", storm.Calls())
	}
	t.Logf("%d %s failures injected; target echoed %d of %d bytes", storm.Hits(), unix.ErrnoName(errno), target.Got(), target.Sent())
}

// fsCheckOpError checks that err is op's *net.OpError around an
// *os.SyscallError of errno.
func fsCheckOpError(t *testing.T, err error, op aio.OpType, errno syscall.Errno) {
	t.Helper()
	var oe *net.OpError
	var se *os.SyscallError
	switch {
	case err == nil:
		t.Fatalf("the target's request did not fail")
	case !errors.As(err, &oe) || oe.Op != op.String():
		t.Fatalf("target's error = %v, want a *net.OpError of %q", err, op)
	case !errors.As(err, &se) || !errors.Is(err, errno):
		t.Fatalf("target's error = %v, want an *os.SyscallError of %s", err, unix.ErrnoName(errno))
	}
}
