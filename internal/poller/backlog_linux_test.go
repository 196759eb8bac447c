//go:build linux

package poller_test

// The io_uring backend when the kernel does not take its submissions:
// io_uring_enter(2) refusing them for a while (EAGAIN, EBUSY) or failing
// for good. A backend must not panic on a system call's result.

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// smallRing is the submission queue size of openSmallURing's backends.
const smallRing = 8

// openSmallURing opens an io_uring backend with a submission queue of
// smallRing entries, closed by t's cleanup, or skips t where io_uring is
// unavailable.
func openSmallURing(t *testing.T, p poller.Provider) poller.Backend {
	t.Helper()
	if err := poller.Available(poller.IOURing); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	be, err := poller.OpenURingSized(p, smallRing)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return be
}

// enterSpy counts the calls of io_uring_enter(2) and, while refuse is
// set, fails them with it without reaching the kernel. The backends of
// these tests run on the test's goroutine, so it needs no lock.
type enterSpy struct {
	calls  int
	refuse syscall.Errno
}

// spyEnter installs an enterSpy until t ends (before the cleanups
// registered earlier, such as openSmallURing's Close).
func spyEnter(t *testing.T) *enterSpy {
	s := &enterSpy{}
	t.Cleanup(uring.Inject(uring.Hooks{Enter: func(uint32) syscall.Errno {
		s.calls++
		return s.refuse
	}}))
	return s
}

// noPanic runs f and fails t if it panics.
func noPanic(t *testing.T, f func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("panic: %v", p)
		}
	}()
	f()
}

// TestURingKernelRefuses: while the kernel refuses every submission
// (EBUSY, EAGAIN), operations are still accepted, more than the ring has
// entries, and Wait returns with no error and no completion; once the
// kernel takes entries again, every operation completes with its result.
// Order is kept: a cancel reaches the kernel after the receive it
// cancels.
func TestURingKernelRefuses(t *testing.T) {
	for name, errno := range map[string]syscall.Errno{"EBUSY": unix.EBUSY, "EAGAIN": unix.EAGAIN} {
		t.Run(name, func(t *testing.T) {
			checkFDs(t)
			be := openSmallURing(t, nil)
			spy := spyEnter(t)
			spy.refuse = errno
			const n = smallRing // pairs with a receive and a send each: twice the ring
			pairs := make([][2]int, n+1)
			bufs := make([][]byte, n+1)
			for i := range pairs {
				pairs[i], bufs[i] = socketpair(t), make([]byte, 16)
				if err := be.Add(pairs[i][0], poller.MakeTag(uint32(i), 1), true); err != nil {
					t.Fatal(err)
				}
			}
			noPanic(t, func() {
				for i := range n {
					tag := poller.MakeTag(uint32(i), 1)
					unix.Write(pairs[i][1], fmt.Appendf(nil, "in %d", i))
					be.Recv(tag, bufs[i])
					be.Send(tag, [][]byte{fmt.Appendf(nil, "out %d", i)})
				}
				last := poller.MakeTag(n, 1) // nothing to read: only the cancel ends it
				be.Recv(last, bufs[n])
				be.Cancel(last, poller.OpRecv)
				for range 3 {
					if rs := poll0(t, be); len(rs) != 0 {
						t.Fatalf("Wait(0) with the kernel refusing delivered %v, want nothing", rs)
					}
				}
			})
			spy.refuse = 0
			rs := waitN(t, be, 2*n+1)
			for _, r := range rs {
				i := r.Tag.Slot()
				switch {
				case i == n:
					if r.Op != poller.OpRecv || r.Err != unix.ECANCELED || r.N != 0 {
						t.Errorf("cancelled receive = %v, want ECANCELED, N 0", r)
					}
				case r.Op == poller.OpRecv:
					wantRecv(t, r, r.Tag, fmt.Sprintf("in %d", i))
				default:
					wantSend(t, r, r.Tag, len(fmt.Sprintf("out %d", i)))
					buf := make([]byte, 16)
					if k, err := unix.Read(pairs[i][1], buf); string(buf[:max(k, 0)]) != fmt.Sprintf("out %d", i) {
						t.Errorf("peer %d read %q, %v, want %q", i, buf[:max(k, 0)], err, fmt.Sprintf("out %d", i))
					}
				}
			}
			if len(rs) != 2*n+1 {
				t.Errorf("%d completions, want %d", len(rs), 2*n+1)
			}
		})
	}
}

// TestURingEnterFails: io_uring_enter(2) failing for good (with an errno
// other than EINTR, EAGAIN, EBUSY or ETIME; EEXIST is a single-issuer
// ring entered from another thread) is no panic: operations are still
// accepted, and every Wait from then on returns the error, so that the
// loop above ends.
func TestURingEnterFails(t *testing.T) {
	checkFDs(t)
	be := openSmallURing(t, nil)
	spyEnter(t).refuse = unix.EEXIST
	var fds [][2]int
	noPanic(t, func() {
		for i := range 2 * smallRing {
			fds = append(fds, socketpair(t))
			tag := poller.MakeTag(uint32(i), 1)
			if err := be.Add(fds[i][0], tag, true); err != nil {
				t.Fatal(err)
			}
			be.Recv(tag, make([]byte, 8))
		}
		for range 2 {
			if err := be.Wait(0, func(*poller.Completion) {}); !errors.Is(err, unix.EEXIST) {
				t.Fatalf("Wait = %v, want EEXIST", err)
			}
		}
	})
}
