//go:build linux

package poller_test

// Remove of a tag whose operations are prepared but not yet submitted to
// the kernel (on io_uring: still in the submission queue, or the
// backlog). The owner removed the connection and closes the descriptor
// next; what it asked for must not happen any more.

import (
	"io"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// skipEager skips t on a backend that makes each operation's system call
// when it is submitted: nothing waits unsubmitted there.
func skipEager(t *testing.T, be poller.Backend) {
	t.Helper()
	if be.Kind() != poller.IOURing {
		t.Skipf("%v tries each operation at once: none waits unsubmitted for Remove to drop", be.Kind())
	}
}

// TestRemoveUnsubmittedSend: a send removed before the kernel saw it
// sends nothing: the owner may already have reused its buffers.
func TestRemoveUnsubmittedSend(t *testing.T) { backendtest.Run(t, testRemoveUnsubmittedSend) }

func testRemoveUnsubmittedSend(t *testing.T) {
	checkFDs(t)
	fd, peer := streamPair(t, "tcp")
	be := open(t, nil)
	skipEager(t, be)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Send(tagA, [][]byte{[]byte("stale")})
	if err := be.Remove(tagA); err != nil {
		t.Fatal(err)
	}
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) after Remove delivered %v, want nothing", rs)
	}
	if got := peerReadToEOF(t, fd, peer); len(got) != 0 {
		t.Fatalf("peer read %q from a removed tag's send, want nothing", got)
	}
}

// peerReadToEOF ends fd's side of the stream (the bytes it sent go
// first) and returns what the peer reads up to the end of file.
func peerReadToEOF(t *testing.T, fd int, peer io.Reader) []byte {
	t.Helper()
	if err := unix.Shutdown(fd, unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	if d, ok := peer.(interface{ SetReadDeadline(time.Time) error }); ok {
		d.SetReadDeadline(time.Now().Add(waitLimit))
	}
	got, err := io.ReadAll(peer)
	if err != nil {
		t.Fatalf("peer read: %v after %q", err, got)
	}
	return got
}

// TestRemoveUnsubmittedRecv: a receive into the owner's buffer, removed
// before any Wait, never writes that buffer, whether the data comes after
// Remove or was already waiting (on io_uring the receive had not reached
// the kernel; epoll reads at once, so that case is io_uring's). The data
// stays in the socket.
func TestRemoveUnsubmittedRecv(t *testing.T) { backendtest.Run(t, testRemoveUnsubmittedRecv) }

func testRemoveUnsubmittedRecv(t *testing.T) {
	for _, early := range []bool{false, true} {
		name := map[bool]string{false: "data after Remove", true: "data waiting"}[early]
		t.Run(name, func(t *testing.T) {
			checkFDs(t)
			pair := socketpair(t)
			be := open(t, nil)
			if early {
				skipEager(t, be)
				unix.Write(pair[1], []byte("data"))
			}
			if err := be.Add(pair[0], tagA, true); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			be.Recv(tagA, buf)
			if err := be.Remove(tagA); err != nil {
				t.Fatal(err)
			}
			if !early {
				unix.Write(pair[1], []byte("data"))
			}
			for range 2 {
				if rs := poll0(t, be); len(rs) != 0 {
					t.Fatalf("Wait(0) after Remove delivered %v, want nothing", rs)
				}
			}
			if string(buf) != string(make([]byte, 16)) {
				t.Errorf("the removed receive's buffer holds %q, want it untouched", buf)
			}
			got := make([]byte, 16)
			if n, err := unix.Read(pair[0], got); string(got[:max(n, 0)]) != "data" {
				t.Errorf("read after Remove = %q, %v, want the data still in the socket", got[:max(n, 0)], err)
			}
		})
	}
}
