package aio_test

// A peer that resets its connection (RST, through SO_LINGER 0) while the
// watcher reads from it or has a large write in flight to it, on one
// loop with other connections. (TestReadReset and TestWriteClosedPeer
// check the errors alone.)

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// TestResetKeepsOthers checks a reset while a read is pending and,
// in "write", while a 32 MiB write the peer never read is in flight with
// a second write queued behind it: the read completes with a *net.OpError
// of "read" matching ECONNRESET (or with io.EOF when the write's failure
// took the reset: a socket reports its error once), the writes with one
// of "write" matching EPIPE or ECONNRESET (the first reporting the part it
// wrote, the second nothing), Free then releases the descriptor, and the
// loop serves the other connections before, during and after.
func TestResetKeepsOthers(t *testing.T) { backendtest.Run(t, testResetKeepsOthers) }

func testResetKeepsOthers(t *testing.T) {
	t.Run("read", func(t *testing.T) { fsResetCase(t, false) })
	t.Run("write", func(t *testing.T) { fsResetCase(t, true) })
}

func fsResetCase(t *testing.T, write bool) {
	leaktest.Check(t)
	s := newFSServer(t, aio.Config{Loops: 1}, false)
	others := fsEchoes(fsPairs(t, s, 2, 1, true))
	stresstest.EchoRound(t, others, "before")
	fds, haveFDs := leaktest.OpenFDs()

	c, peer := tcpPair(t)
	if err := s.w.Read("read", c, make([]byte, 64)); err != nil {
		t.Fatalf("Read = %v", err)
	}
	want := 1
	big := make([]byte, 32<<20)
	if write {
		want = 3
		if err := s.w.Write("write", c, big); err != nil {
			t.Fatalf("Write = %v", err)
		}
		if err := s.w.Write("queued", c, []byte("queued")); err != nil {
			t.Fatalf("Write = %v", err)
		}
		s.w.Poke() // the write is in flight: the peer's buffers are full
		if st := s.w.Stats().Total(); st.PendingWrites != 2 {
			t.Fatalf("Stats: %d writes pending, want 2", st.PendingWrites)
		}
	}
	stresstest.EchoRound(t, others, "with the requests pending")

	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	for range want {
		r := s.next(t)
		switch r.Context {
		case "read":
			if write && r.Error == io.EOF {
				break // the write took the reset: the socket reports its error once
			}
			fsCheckReset(t, r, "read", syscall.ECONNRESET)
			if r.Size != 0 {
				t.Errorf("reset read: Size %d, want 0", r.Size)
			}
		case "write":
			fsCheckReset(t, r, "write", syscall.EPIPE, syscall.ECONNRESET)
			if r.Size <= 0 || r.Size >= len(big) {
				t.Errorf("reset 32 MiB write: Size %d, want the part written, in (0, %d)", r.Size, len(big))
			}
		case "queued":
			fsCheckReset(t, r, "write", syscall.EPIPE, syscall.ECONNRESET)
			if r.Size != 0 {
				t.Errorf("write queued behind the reset one: Size %d, want 0", r.Size)
			}
		default:
			t.Fatalf("completion %v, want one of the reset conn's", r)
		}
	}
	if err := s.w.Free(c); err != nil {
		t.Fatalf("Free = %v", err)
	}
	waitFor(t, "the reset conn to be released", func() bool { return s.w.Stats().Total().Conns == len(others) })
	if now, _ := leaktest.OpenFDs(); haveFDs && len(leaktest.NewFDs(fds, now)) > 0 {
		t.Errorf("descriptors left by the reset conn:\n%s", leaktest.Describe(leaktest.NewFDs(fds, now)))
	}
	stresstest.EchoRound(t, others, "after the reset")
}

// fsCheckReset checks that r failed with op's *net.OpError around an
// *os.SyscallError matching one of errnos.
func fsCheckReset(t *testing.T, r result, op string, errnos ...syscall.Errno) {
	t.Helper()
	var oe *net.OpError
	if !errors.As(r.Error, &oe) || oe.Op != op {
		t.Errorf("%v: error %v, want a *net.OpError of %q", r.Context, r.Error, op)
		return
	}
	for _, e := range errnos {
		if errors.Is(r.Error, e) {
			return
		}
	}
	t.Errorf("%v: error %v, want one of %v", r.Context, r.Error, errnos)
}
