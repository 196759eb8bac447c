//go:build linux

package uring_test

import (
	"fmt"
	"testing"

	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// TestRecvLimit: RecvLimit's answer matches the kernel's release (the
// byte limit came with Linux 6.17), and where it says yes, a multishot
// receive armed with a limit ends, without CQEFMore, once it received
// that many bytes, its last receive not cut short: it brought less than
// the limit and one buffer.
func TestRecvLimit(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor)
	want := major > 6 || major == 6 && minor >= 17
	if got := uring.RecvLimit(); got != want {
		t.Fatalf("RecvLimit() = %v on Linux %d.%d, want %v", got, major, minor, want)
	}
	if !want {
		t.Skipf("Linux %d.%d has no multishot receive limit", major, minor)
	}

	r := ring(t)
	const size, limit = 1 << 10, 3<<10 + 100
	br, err := r.RegisterBufRing(1, 8, size, false)
	if err != nil {
		t.Fatalf("RegisterBufRing: %v", err)
	}
	defer br.Close()
	a, b := socketpair(t)
	if n, err := unix.Write(b, make([]byte, 16<<10)); n != 16<<10 {
		t.Fatalf("write = %d, %v", n, err)
	}
	e := r.SQE()
	e.Opcode, e.FD, e.UserData = uring.OpRecv, int32(a), 7
	e.IOPrio, e.Flags, e.BufIndex = uring.RecvMultishot, uring.SQEBufferSelect, br.Group()
	e.FileIndex = limit // optlen
	total, more := 0, true
	for more {
		for _, c := range reap(t, r, 1) {
			switch {
			case !more:
				t.Fatalf("completion %+v after the last, want none", c)
			case c.Res <= 0:
				t.Fatalf("completion %+v after %d bytes, want data", c, total)
			}
			total += int(c.Res)
			more = c.Flags&uring.CQEFMore != 0
			if more && total >= limit {
				t.Fatalf("%d bytes received and more to come, want the end at %d", total, limit)
			}
		}
	}
	if total < limit || total >= limit+size {
		t.Errorf("the limited multishot brought %d bytes, want from %d to %d", total, limit, limit+size-1)
	}
}
