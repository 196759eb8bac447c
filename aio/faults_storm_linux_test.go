package aio_test

// Storms of injected system-call failures (internal/testkit/faulttest) on the
// watcher's reads and writes, on every backend: transient errnos are
// retried without a trace, resource errnos complete one connection's
// request with a clear error. (aio has no accept of its own: the caller
// accepts; see faults_emfile_linux_test.go for what it does at the descriptor
// limit.)

import (
	"fmt"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/stresstest"
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
// sends its next message anyway, and after the storm one more connection
// and a last message on every connection bring the last edges. The
// clients are stresstest.StormTransient's.
func TestStormTransient(t *testing.T) { backendtest.Run(t, testStormTransient) }

func testStormTransient(t *testing.T) {
	backendtest.SkipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	for _, buf := range fsBuffers {
		for _, errno := range []syscall.Errno{unix.EINTR, unix.EAGAIN} {
			t.Run(buf.name+"/"+unix.ErrnoName(errno), func(t *testing.T) {
				s := startFSServer(t, buf.user)
				storm := faulttest.Start(t, faulttest.Storm{Errno: errno, MinGap: 2, MaxGap: 10})
				immediate := errno == unix.EINTR || s.w.Stats().Total().Backend == backend.IOURing
				stresstest.StormTransient(t, s.addr, storm, immediate)
				if n := s.errCount(); n != 0 {
					t.Errorf("%d connections failed, want none", n)
				}
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
// re-arms: there the read is retried and the connection goes on. The
// clients are stresstest.StormConn's.
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
	fop, retry := faulttest.Read, stresstest.NoRetry
	if op == aio.OpWrite {
		fop = faulttest.Write
	}
	// On io_uring a swap-buffer read is tried at once with read(2), where
	// ENOBUFS is the socket's error, as on epoll; only if nothing is
	// waiting does it go to the buffer ring, where ENOBUFS means the ring
	// ran dry and is retried. So there the storm may end the connection
	// or not: if every byte came back, the ring's retry took every hit.
	if op == aio.OpRead && errno == unix.ENOBUFS && s.w.Stats().Total().Backend == backend.IOURing && !user {
		retry = stresstest.MayRetry
	}
	cs, retried := stresstest.StormConn(t, s.addr, fop, errno, retry)
	if !retried {
		if err := stresstest.CheckOpError(s.errOf(cs[0].Conn()), op.String(), errno); err != nil {
			t.Fatalf("target's request: %v", err)
		}
	}
	for i, c := range cs[1:] {
		if err := s.errOf(c.Conn()); err != nil {
			t.Errorf("client %d: the server's request failed: %v", i+1, err)
		}
	}
}
