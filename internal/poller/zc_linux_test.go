//go:build linux

package poller_test

import (
	"bytes"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// zeroCopyMin, when positive, makes open turn on zero-copy sends of at
// least that many bytes on a backend that has them.
var zeroCopyMin int

// openZeroCopy returns a backend whose stream sends of at least min bytes
// are zero-copy, skipping t where there are none.
func openZeroCopy(t *testing.T, min int) poller.Backend {
	t.Helper()
	be := open(t, nil)
	zc, ok := be.(poller.ZeroCopier)
	if !ok {
		t.Skipf("the %v backend has no zero-copy sends", be.Kind())
	}
	if !zc.SetZeroCopy(min) {
		t.Skip("this kernel has no IORING_OP_SEND_ZC")
	}
	return be
}

// TestZeroCopySuite runs the send tests again with every send of a byte
// or more zero-copy: whole sends, vectors, short sends resubmitted, a
// peer closing midway, and unix sockets (which refuse zero-copy: the
// backend copies instead).
func TestZeroCopySuite(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		openZeroCopy(t, 1) // skips where there is none
		zeroCopyMin = 1
		defer func() { zeroCopyMin = 0 }()
		for name, f := range map[string]func(*testing.T){
			"SendVectors":          testSendVectors,
			"SendManyVectors":      testSendManyVectors,
			"SendLarge":            testSendLarge,
			"SendClosedPeer":       testSendClosedPeer,
			"SendPeerClosesMidway": testSendPeerClosesMidway,
			"SendProgressExact":    testSendProgressExact,
			"SendAndRecvSameTag":   testSendAndRecvSameTag,
		} {
			t.Run(name, f)
		}
	})
}

// TestZeroCopySend: sends at or above the threshold are zero-copy, the
// peer reads every byte in order, and each completes once, after the
// kernel let go of the buffers.
func TestZeroCopySend(t *testing.T) { backendtest.Run(t, testZeroCopySend) }

func testZeroCopySend(t *testing.T) {
	checkFDs(t)
	fd, peer := streamPair(t, "tcp")
	shrinkBuffers(t, fd, peer)
	be := openZeroCopy(t, 4096)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	data := pattern(3 << 20)
	for _, c := range []struct {
		name string
		bufs [][]byte
		zc   bool
	}{
		{"one buffer", [][]byte{data[:1<<20]}, true},
		{"vector", [][]byte{data[:64<<10], data[64<<10 : 64<<10+1], data[64<<10+1 : 3<<20]}, true},
		{"under the threshold", [][]byte{data[:4095]}, false},
	} {
		want := bytes.Join(c.bufs, nil)
		before, _ := poller.ZeroCopyCounts(be)
		start := make(chan struct{})
		read := slowRead(t, peer, len(want), start)
		be.Send(tagA, c.bufs)
		close(start)
		wantSend(t, waitOne(t, be), tagA, len(want))
		if got := <-read; !bytes.Equal(got, want) {
			t.Fatalf("%s: peer read different bytes than sent", c.name)
		}
		after, copied := poller.ZeroCopyCounts(be)
		if zc := after > before; zc != c.zc {
			t.Fatalf("%s: zero-copy sends %d → %d, want zero-copy %v", c.name, before, after, c.zc)
		}
		t.Logf("%s: %d zero-copy sends so far, %d of them copied by the kernel (loopback copies)", c.name, after, copied)
	}
}

// TestZeroCopyCancelResets: a zero-copy send to a peer that stopped
// reading cannot get its pages back while the socket holds them, so
// Cancel resets the connection: the send completes with ECANCELED and its
// progress, and the peer reads a prefix of the data, then the reset.
func TestZeroCopyCancelResets(t *testing.T) { backendtest.Run(t, testZeroCopyCancelResets) }

func testZeroCopyCancelResets(t *testing.T) {
	checkFDs(t)
	be, peer, data := stuckZeroCopySend(t)
	be.Cancel(tagA, poller.OpSend)
	r := waitOne(t, be)
	if r.Op != poller.OpSend || r.Err != unix.ECANCELED || r.N <= 0 || r.N >= len(data) {
		t.Fatalf("cancelled zero-copy send = %v, want ECANCELED with 0 < N < %d", r, len(data))
	}
	got := peerReadToError(t, peer)
	if len(got) > r.N || !bytes.Equal(got, data[:len(got)]) {
		t.Fatalf("peer read %d bytes, want a prefix of the data of at most N = %d", len(got), r.N)
	}
}

// TestZeroCopyRemoveInFlight: removing a tag whose zero-copy send is
// stuck behind a peer that does not read resets the connection, so the
// kernel returns the pages at once: Close finds nothing in flight, and
// no memory is left to the kernel.
func TestZeroCopyRemoveInFlight(t *testing.T) { backendtest.Run(t, testZeroCopyRemoveInFlight) }

func testZeroCopyRemoveInFlight(t *testing.T) {
	checkFDs(t)
	stuck := poller.StuckOrphans()
	be, peer, data := stuckZeroCopySend(t)
	if err := be.Remove(tagA); err != nil {
		t.Fatal(err)
	}
	if rs := waitNWithin(t, be, 0, 100*time.Millisecond); len(rs) != 0 {
		t.Fatalf("completions %v after Remove, want none", rs)
	}
	got := peerReadToError(t, peer)
	if !bytes.Equal(got, data[:len(got)]) {
		t.Fatalf("peer read %d bytes that are not a prefix of the data", len(got))
	}
	if err := be.Close(); err != nil {
		t.Fatal(err)
	}
	if n := poller.StuckOrphans(); n != stuck {
		t.Fatalf("%d backends left memory to the kernel, want %d", n, stuck)
	}
}

// stuckZeroCopySend starts a zero-copy send of 8 MiB under tagA to a peer
// that does not read, over small socket buffers, so it cannot complete.
func stuckZeroCopySend(t *testing.T) (be poller.Backend, peer net.Conn, data []byte) {
	t.Helper()
	fd, peer := streamPair(t, "tcp")
	shrinkBuffers(t, fd, peer)
	be = openZeroCopy(t, 1)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	data = pattern(8 << 20)
	be.Send(tagA, [][]byte{data})
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	return be, peer, data
}

// peerReadToError reads until the connection fails, which must be a
// reset, and returns what it read.
func peerReadToError(t *testing.T, peer net.Conn) []byte {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(waitLimit))
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := peer.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			if !errors.Is(err, unix.ECONNRESET) {
				t.Fatalf("peer read ended with %v after %d bytes, want a reset", err, len(got))
			}
			return got
		}
	}
}

// TestZeroCopyAcceptedSocket: a socket that refuses zero-copy sends (an
// accepted TCP socket on Linux 6.18 answers EOPNOTSUPP) gets copying
// sends instead; every byte arrives, in order.
func TestZeroCopyAcceptedSocket(t *testing.T) { backendtest.Run(t, testZeroCopyAcceptedSocket) }

func testZeroCopyAcceptedSocket(t *testing.T) {
	checkFDs(t)
	fd, peer := acceptedPair(t)
	be := openZeroCopy(t, 1)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	data := pattern(1 << 20)
	for i := 0; i < 2; i++ {
		start := make(chan struct{})
		read := slowRead(t, peer, len(data), start)
		be.Send(tagA, [][]byte{data})
		close(start)
		wantSend(t, waitOne(t, be), tagA, len(data))
		if got := <-read; !bytes.Equal(got, data) {
			t.Fatal("peer read different bytes than sent")
		}
	}
	sends, _ := poller.ZeroCopyCounts(be)
	t.Logf("zero-copy sends tried: %d (at most one: a refusal sticks)", sends)
	if sends > 1 {
		t.Fatalf("zero-copy sends tried %d times, want at most once", sends)
	}
}

// acceptedPair is streamPair's "tcp" with the roles swapped: the backend
// gets the accepted socket.
func acceptedPair(t *testing.T) (fd int, peer net.Conn) {
	t.Helper()
	return tcpStreamPair(t, true)
}
