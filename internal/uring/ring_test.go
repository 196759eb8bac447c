//go:build linux

package uring_test

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// ring sets up a ring owned by the test's goroutine, locked to its thread
// until the test ends, or skips the test where io_uring is unavailable.
func ring(t *testing.T) *uring.Ring {
	t.Helper()
	runtime.LockOSThread()
	r, err := uring.Setup(uring.Config{Entries: 8, CQEntries: 16})
	if errors.Is(err, uring.ErrUnavailable) {
		runtime.UnlockOSThread()
		t.Skipf("io_uring unavailable: %v", err)
	}
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		runtime.UnlockOSThread()
	})
	if err := r.Enable(); err != nil {
		t.Fatalf("Enable: %v", err)
	}
	if err := r.RegisterRingFD(); err != nil {
		t.Fatalf("RegisterRingFD: %v", err)
	}
	return r
}

// reap waits for n completions and returns copies of them.
func reap(t *testing.T, r *uring.Ring, n int) []uring.CQE {
	t.Helper()
	var got []uring.CQE
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d completions after 5s, want %d", len(got), n)
		}
		if err := r.Wait(100 * time.Millisecond); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		a, b := r.Peek()
		got = append(append(got, a...), b...)
		r.Advance(uint32(len(a) + len(b)))
	}
	return got
}

func socketpair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func TestNopUserData(t *testing.T) {
	r := ring(t)
	for i := range 3 {
		sqe := r.SQE()
		sqe.Opcode = uring.OpNop
		sqe.UserData = 0xabc0 + uint64(i)
	}
	got := reap(t, r, 3)
	for i, c := range got {
		if c.UserData != 0xabc0+uint64(i) || c.Res != 0 {
			t.Errorf("completion %d = %+v, want user data %#x, res 0", i, c, 0xabc0+i)
		}
	}
}

func TestSQFullThenSubmit(t *testing.T) {
	r := ring(t)
	n := 0
	for r.SQE() != nil { // NOPs: zeroed entries are NOPs
		n++
	}
	if n != 8 {
		t.Fatalf("SQE() gave %d entries before nil, want 8", n)
	}
	if err := r.Submit(); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if r.SQE() == nil {
		t.Fatal("SQE() = nil after Submit")
	}
	reap(t, r, 9)
}

func TestRecvSend(t *testing.T) {
	r := ring(t)
	a, b := socketpair(t)
	buf := make([]byte, 16)
	msg := []byte("hello, ring")
	recv := r.SQE()
	recv.Opcode, recv.FD, recv.UserData = uring.OpRecv, int32(a), 1
	recv.Addr, recv.Len = uint64(uintptr(unsafe.Pointer(&buf[0]))), uint32(len(buf))
	send := r.SQE()
	send.Opcode, send.FD, send.UserData = uring.OpSend, int32(b), 2
	send.Addr, send.Len = uint64(uintptr(unsafe.Pointer(&msg[0]))), uint32(len(msg))
	for _, c := range reap(t, r, 2) {
		if c.Res != int32(len(msg)) {
			t.Errorf("completion %d res = %d, want %d", c.UserData, c.Res, len(msg))
		}
	}
	if string(buf[:len(msg)]) != string(msg) {
		t.Errorf("received %q, want %q", buf[:len(msg)], msg)
	}
	runtime.KeepAlive(buf)
	runtime.KeepAlive(msg)
}

func TestCQOverflowLosesNothing(t *testing.T) {
	r := ring(t) // 16 completion entries
	const n = 40
	for i := range n {
		sqe := r.SQE()
		if sqe == nil {
			if err := r.Submit(); err != nil {
				t.Fatal(err)
			}
			sqe = r.SQE()
		}
		sqe.UserData = uint64(i)
	}
	got := reap(t, r, n)
	for i, c := range got {
		if c.UserData != uint64(i) {
			t.Fatalf("completion %d has user data %d: order lost", i, c.UserData)
		}
	}
}

func TestMultishotRecvBufRing(t *testing.T) {
	r := ring(t)
	br, err := r.RegisterBufRing(1, 4, 64, true)
	if err != nil {
		t.Fatalf("RegisterBufRing: %v", err)
	}
	defer br.Close()
	a, b := socketpair(t)
	sqe := r.SQE()
	sqe.Opcode, sqe.FD, sqe.UserData = uring.OpRecv, int32(a), 7
	sqe.IOPrio = uring.RecvMultishot
	sqe.Flags = uring.SQEBufferSelect
	sqe.BufIndex = br.Group()
	off := map[uint16]int{}
	for _, m := range []string{"one", "two", "three"} {
		unix.Write(b, []byte(m))
		c := reap(t, r, 1)[0]
		if c.Res != int32(len(m)) || c.Flags&uring.CQEFBuffer == 0 || c.Flags&uring.CQEFMore == 0 {
			t.Fatalf("completion for %q = %+v, want res %d with a buffer and more to come", m, c, len(m))
		}
		id := c.BufID()
		got := string(br.Buf(id)[off[id] : off[id]+int(c.Res)])
		if br.Inc() {
			off[id] += int(c.Res)
		}
		if got != m {
			t.Errorf("buffer %d holds %q, want %q", id, got, m)
		}
	}
	cancel := r.SQE()
	cancel.Opcode, cancel.Addr, cancel.UserData = uring.OpAsyncCancel, 7, 8
	for _, c := range reap(t, r, 2) {
		if c.UserData == 7 && (c.Res != -int32(syscall.ECANCELED) || c.Flags&uring.CQEFMore != 0) {
			t.Errorf("cancelled receive's last completion = %+v, want ECANCELED without more", c)
		}
	}
}

func TestMultishotAccept(t *testing.T) {
	r := ring(t)
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(ln)
	if err := unix.Bind(ln, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	unix.Listen(ln, 8)
	sa, _ := unix.Getsockname(ln)
	sqe := r.SQE()
	sqe.Opcode, sqe.FD, sqe.UserData = uring.OpAccept, int32(ln), 3
	sqe.IOPrio = uring.AcceptMultishot
	sqe.OpFlags = unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK
	for range 2 {
		c, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(c)
		if err := unix.Connect(c, sa); err != nil {
			t.Fatal(err)
		}
		got := reap(t, r, 1)[0]
		if got.Res < 0 || got.Flags&uring.CQEFMore == 0 {
			t.Fatalf("accept completion = %+v, want a descriptor and more to come", got)
		}
		unix.Close(int(got.Res))
	}
	cancel := r.SQE()
	cancel.Opcode, cancel.Addr, cancel.UserData = uring.OpAsyncCancel, 3, 4
	reap(t, r, 2)
}

func TestFixedFiles(t *testing.T) {
	r := ring(t)
	if err := r.RegisterFilesSparse(16); err != nil {
		t.Fatalf("RegisterFilesSparse: %v", err)
	}
	a, b := socketpair(t)
	if err := r.UpdateFile(3, int32(b)); err != nil {
		t.Fatalf("UpdateFile: %v", err)
	}
	msg := []byte("fixed")
	sqe := r.SQE()
	sqe.Opcode, sqe.FD, sqe.Flags, sqe.UserData = uring.OpSend, 3, uring.SQEFixedFile, 1
	sqe.Addr, sqe.Len = uint64(uintptr(unsafe.Pointer(&msg[0]))), uint32(len(msg))
	if c := reap(t, r, 1)[0]; c.Res != int32(len(msg)) {
		t.Fatalf("send on fixed file 3 = %+v, want %d bytes", c, len(msg))
	}
	buf := make([]byte, 8)
	if n, _ := unix.Read(a, buf); string(buf[:n]) != "fixed" {
		t.Errorf("read %q, want %q", buf[:n], "fixed")
	}
	runtime.KeepAlive(msg)
}

func TestSetupUnavailable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		errno    syscall.Errno
		disabled int
	}{
		{"ENOSYS", unix.ENOSYS, 0},
		{"EPERM seccomp", unix.EPERM, 0},
		{"ENOMEM memlock", unix.ENOMEM, 0},
		{"EMFILE", unix.EMFILE, 0},
		{"sysctl disabled", 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore := uring.Inject(uring.Hooks{
				Setup:    func(uint32, unsafe.Pointer) (int, syscall.Errno) { return -1, tc.errno },
				Disabled: func() int { return tc.disabled },
			})
			defer restore()
			r, err := uring.Setup(uring.Config{Entries: 8})
			if err == nil {
				r.Close()
				t.Fatal("Setup succeeded, want an error")
			}
			if !errors.Is(err, uring.ErrUnavailable) {
				t.Errorf("Setup = %v, want it to wrap ErrUnavailable", err)
			}
			if tc.errno != 0 && !errors.Is(err, tc.errno) {
				t.Errorf("Setup = %v, want it to wrap %v", err, tc.errno)
			}
		})
	}
}

func TestSetupFallsBackOnEINVAL(t *testing.T) {
	var tried []uint32
	restore := uring.Inject(uring.Hooks{
		Setup: func(n uint32, p unsafe.Pointer) (int, syscall.Errno) {
			flags := *(*uint32)(unsafe.Add(p, 8))
			tried = append(tried, flags)
			return -1, unix.EINVAL
		},
		Disabled: func() int { return 0 }, // as if enabled, also where it is not
	})
	defer restore()
	if _, err := uring.Setup(uring.Config{Entries: 8}); !errors.Is(err, uring.ErrUnavailable) {
		t.Fatalf("Setup = %v, want ErrUnavailable", err)
	}
	if len(tried) != 3 || tried[0]&uring.SetupSingleIssuer == 0 || tried[1]&uring.SetupCoopTaskrun == 0 {
		t.Errorf("flags tried = %#x, want single-issuer, then coop-taskrun, then plain", tried)
	}
}

// refuse makes the next n calls of io_uring_enter(2) fail with errno
// without reaching the kernel, until t ends.
func refuse(t *testing.T, n int, errno syscall.Errno) {
	t.Helper()
	restore := uring.Inject(uring.Hooks{Enter: func(uint32) syscall.Errno {
		if n > 0 {
			n--
			return errno
		}
		return 0
	}})
	t.Cleanup(restore)
}

// nops prepares n NOPs with user data from first on, and reports whether
// the queue had room for all of them.
func nops(r *uring.Ring, first, n int) bool {
	for i := range n {
		e := r.SQE()
		if e == nil {
			return false
		}
		e.Opcode, e.UserData = uring.OpNop, uint64(first+i)
	}
	return true
}

// TestSubmitRefused: entries the kernel did not take because
// io_uring_enter(2) failed with EAGAIN or EBUSY stay queued: the next
// Submit or Wait submits them with what was prepared since, in order, and
// the queue has room again once they are taken.
func TestSubmitRefused(t *testing.T) {
	for name, errno := range map[string]syscall.Errno{"EAGAIN": unix.EAGAIN, "EBUSY": unix.EBUSY} {
		for _, tc := range []struct {
			name          string
			before, after int // NOPs prepared before and after the refused Submit
		}{
			{"some", 3, 0},
			{"some, then more", 3, 2},
			{"a full queue", 8, 0},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				r := ring(t) // 8 entries
				refuse(t, 1, errno)
				if !nops(r, 0, tc.before) {
					t.Fatalf("queue full before %d entries", tc.before)
				}
				if err := r.Submit(); err != nil {
					t.Fatalf("refused Submit = %v, want nil (retried later)", err)
				}
				if !nops(r, tc.before, tc.after) {
					t.Fatalf("queue full with %d entries refused, want room for %d more", tc.before, tc.after)
				}
				if err := r.Submit(); err != nil {
					t.Fatalf("Submit: %v", err)
				}
				n := tc.before + tc.after
				for i, c := range reap(t, r, n) {
					if c.UserData != uint64(i) || c.Res != 0 {
						t.Errorf("completion %d = %+v, want user data %d, res 0", i, c, i)
					}
				}
				if r.SQE() == nil {
					t.Error("SQE() = nil once every entry completed, want a free entry")
				}
			})
		}
	}
}

// TestUnconsumed: Unconsumed returns the entries the kernel has not
// consumed, published and refused ones included, oldest first across the
// end of the queue; an entry rewritten there is what the kernel gets.
func TestUnconsumed(t *testing.T) {
	r := ring(t) // 8 entries
	userData := func() []uint64 {
		var got []uint64
		a, b := r.Unconsumed()
		for _, e := range append(append([]uring.SQE(nil), a...), b...) {
			got = append(got, e.UserData)
		}
		return got
	}
	want := func(what string, ud ...uint64) {
		t.Helper()
		if got := userData(); fmt.Sprint(got) != fmt.Sprint(ud) {
			t.Fatalf("%s: Unconsumed() has user data %v, want %v", what, got, ud)
		}
	}
	want("empty")
	nops(r, 0, 6)
	reap(t, r, 6)
	want("all consumed")
	nops(r, 6, 3)
	refuse(t, 1, unix.EBUSY)
	r.Submit()
	nops(r, 9, 2) // positions 6 to 10: across the end
	want("refused, then more", 6, 7, 8, 9, 10)
	nops(r, 11, 3)
	want("full", 6, 7, 8, 9, 10, 11, 12, 13)
	a, _ := r.Unconsumed()
	a[1] = uring.SQE{Opcode: uring.OpNop, UserData: 77}
	got := reap(t, r, 8)
	if got[1].UserData != 77 {
		t.Errorf("completion 1 has user data %d, want the rewritten entry's 77", got[1].UserData)
	}
	want("all consumed again")
}

// TestCloseUnregistersRingFD: Close releases the ring's registration
// with its thread (RegisterRingFD). The kernel keeps at most 16 per
// thread, and a registration holds the ring: a loop thread that set up
// and closed rings would otherwise keep every one of them allocated,
// and fail to register the 17th.
func TestCloseUnregistersRingFD(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := range 20 {
		r, err := uring.Setup(uring.Config{Entries: 8})
		if errors.Is(err, uring.ErrUnavailable) {
			t.Skipf("io_uring unavailable: %v", err)
		}
		if err != nil {
			t.Fatalf("Setup: %v", err)
		}
		err = r.Enable()
		if err == nil {
			err = r.RegisterRingFD()
		}
		if cerr := r.Close(); cerr != nil {
			t.Fatalf("ring %d: Close: %v", i, cerr)
		}
		if err != nil {
			t.Fatalf("ring %d on one thread: %v", i, err)
		}
	}
}
