//go:build linux

package poller_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"testing"

	"golang.org/x/sys/unix"
)

// dgramPair returns a connected pair of non-blocking datagram sockets,
// closed by t's cleanup.
func dgramPair(t *testing.T) (fd, peer int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socketpair: %v", err)
	}
	t.Cleanup(func() {
		unix.Close(fds[0])
		unix.Close(fds[1])
	})
	return fds[0], fds[1]
}

func sendDgram(t *testing.T, fd int, p []byte) {
	t.Helper()
	if _, err := unix.Write(fd, p); err != nil {
		t.Fatalf("write datagram: %v", err)
	}
}

// TestDatagramZeroLength: on a datagram socket a zero-byte read is an
// empty datagram, not end of file: N == 0, Err == 0, and the next receive
// works as before.
func TestDatagramZeroLength(t *testing.T) { backendtest.Run(t, testDatagramZeroLength) }

func testDatagramZeroLength(t *testing.T) {
	checkFDs(t)
	fd, peer := dgramPair(t)
	be := open(t, nil)
	if err := be.Add(fd, tagA, false); err != nil {
		t.Fatal(err)
	}

	// Immediate.
	sendDgram(t, peer, nil)
	be.Recv(tagA, make([]byte, 64))
	wantRecv(t, waitOne(t, be), tagA, "")
	be.Recv(tagA, make([]byte, 64))
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) after the empty datagram delivered %v, want nothing", rs)
	}
	sendDgram(t, peer, []byte("xyz"))
	wantRecv(t, waitOne(t, be), tagA, "xyz")

	// Parked.
	be.Recv(tagA, make([]byte, 64))
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	sendDgram(t, peer, nil)
	wantRecv(t, waitOne(t, be), tagA, "")
	be.Recv(tagA, make([]byte, 64))
	sendDgram(t, peer, []byte("after"))
	wantRecv(t, waitOne(t, be), tagA, "after")
}

// TestDatagramBoundaries: each receive gets one datagram, and a short one
// does not make the next receive wait for an edge (that shortcut is for
// streams only).
func TestDatagramBoundaries(t *testing.T) { backendtest.Run(t, testDatagramBoundaries) }

func testDatagramBoundaries(t *testing.T) {
	checkFDs(t)
	fd, peer := dgramPair(t)
	be := open(t, nil)
	if err := be.Add(fd, tagA, false); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"ab", "cd", "", "efgh"} {
		sendDgram(t, peer, []byte(d))
	}
	for _, want := range []string{"ab", "cd", "", "ef"} {
		size := 16 // a short read
		if want == "ef" {
			size = 2 // "efgh" is cut
		}
		be.Recv(tagA, make([]byte, size))
		rs := poll0(t, be)
		if len(rs) != 1 {
			t.Fatalf("Wait(0) delivered %v, want the datagram %q at once", rs, want)
		}
		wantRecv(t, rs[0], tagA, want)
	}
}

// TestDatagramSend: a send of several buffers is one datagram.
func TestDatagramSend(t *testing.T) { backendtest.Run(t, testDatagramSend) }

func testDatagramSend(t *testing.T) {
	checkFDs(t)
	fd, peer := dgramPair(t)
	be := open(t, nil)
	if err := be.Add(fd, tagA, false); err != nil {
		t.Fatal(err)
	}
	be.Send(tagA, [][]byte{[]byte("one"), []byte("-"), []byte("two")})
	wantSend(t, waitOne(t, be), tagA, 7)
	be.Send(tagA, [][]byte{[]byte("three")})
	wantSend(t, waitOne(t, be), tagA, 5)
	buf := make([]byte, 64)
	for _, want := range []string{"one-two", "three"} {
		n, err := unix.Read(peer, buf)
		if err != nil || string(buf[:n]) != want {
			t.Fatalf("peer read %q, %v; want %q", buf[:n], err, want)
		}
	}
}
