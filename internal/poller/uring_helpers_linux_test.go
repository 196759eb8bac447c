package poller

import (
	"testing"

	"golang.org/x/sys/unix"
)

// urPair opens the io_uring backend for p, with a submission queue of
// entries, and a non-blocking stream socket pair whose first end is
// added under the returned tag; t's cleanup closes them all. It skips
// where io_uring is unavailable.
func urPair(t *testing.T, p Provider, entries uint32) (*uringBackend, Tag, [2]int) {
	t.Helper()
	if err := Available(IOURing); err != nil {
		t.Skipf("io_uring unavailable here: %v", err)
	}
	b, err := newURing(p, entries)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		b.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	tag := MakeTag(0, 1)
	if err := b.Add(fds[0], tag, true); err != nil {
		t.Fatal(err)
	}
	return b, tag, [2]int(fds)
}
