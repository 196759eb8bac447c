//go:build linux

package poller_test

import (
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// TestRemoveThenReuse: the caller closes a descriptor once Remove
// returns, and the next socket may take its number at once (a server's
// accept does, under churn). An operation submitted for the removed tag
// must not reach that socket: on io_uring an entry still waiting in the
// submission queue names the descriptor by number, and the soak test
// (galebench soak) saw engine's batched sends of a reset connection
// delivered to the next connection's peer.
func TestRemoveThenReuse(t *testing.T) { backendtest.Run(t, testRemoveThenReuse) }

func testRemoveThenReuse(t *testing.T) {
	checkFDs(t)
	be := open(t, nil)
	a := socketpair(t)
	if err := be.Add(a[0], tagA, true); err != nil {
		t.Fatal(err)
	}
	poll0(t, be) // the ring is running, as in a loop
	be.Recv(tagA, nil)
	be.Send(tagA, [][]byte{[]byte("stale")})
	if err := be.Remove(tagA); err != nil {
		t.Fatal(err)
	}
	// The next socket takes a[0]'s number, as dup3 forces here.
	b := socketpair(t)
	if err := unix.Dup3(b[0], a[0], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	unix.Write(b[1], []byte("for b"))
	poll0(t, be)
	time.Sleep(20 * time.Millisecond)
	poll0(t, be)
	buf := make([]byte, 16)
	if n, err := unix.Read(b[1], buf); err != unix.EAGAIN {
		t.Errorf("the new socket's peer read %q, %v: want nothing (EAGAIN), the removed tag's send", buf[:max(n, 0)], err)
	}
	if n, err := unix.Read(a[0], buf); n != 5 || string(buf[:n]) != "for b" {
		t.Errorf("the new socket read %q, %v: want %q, not taken by the removed tag's receive", buf[:max(n, 0)], err, "for b")
	}
}

// socketpair returns a non-blocking stream socket pair, closed by t's
// cleanup.
func socketpair(t *testing.T) [2]int {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return [2]int(fds)
}
