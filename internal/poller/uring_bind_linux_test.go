//go:build linux

package poller

import (
	"testing"

	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// TestURingBindFails: a ring that cannot be enabled on the loop's thread
// is no panic: the operation that found it so is accepted, and Wait
// returns the error. The failure is made by putting /dev/null in the
// place of the ring's descriptor, so io_uring_register(2) fails; the
// mappings keep the ring itself alive until Close.
func TestURingBindFails(t *testing.T) {
	if err := Available(IOURing); err != nil {
		t.Skipf("io_uring unavailable here: %v", err)
	}
	b, err := newURing(nil, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.r.Flags()&uring.SetupRDisabled == 0 {
		t.Skip("the ring is enabled from the start here: binding cannot fail")
	}
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Dup3(null, b.r.FD(), unix.O_CLOEXEC)
	unix.Close(null)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	tag := MakeTag(0, 1)
	if err := b.Add(fds[0], tag, true); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("Recv on a ring that cannot be enabled panicked: %v", p)
			}
		}()
		b.Recv(tag, make([]byte, 8))
	}()
	if err := b.Wait(0, func(*Completion) {}); err == nil {
		t.Fatal("Wait = nil on a ring that could not be enabled, want the error")
	}
}
