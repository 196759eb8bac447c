//go:build linux

package poller_test

import (
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
)

// TestSpillReleased: on io_uring, data a multishot receive (a Transient
// provider's, engine's) brings while its owner is not reading is spilled, and a burst can spill far more
// than the 64 KiB bound (a whole batch of the ring's buffers). Once that
// is served, the connection must keep no spill array at all (an idle
// connection holds no memory; arrays within the bound go to the
// backend's spares), and once the tag is removed its slot must
// keep none: the soak test (galebench soak) saw aio-io_uring's server
// hold tens of MiB of spill in the slots of closed connections.
func TestSpillReleased(t *testing.T) {
	be, peer := ringBurstPair(t, spaceProvider{})

	// The owner does not read: a burst lands in the ring and is spilled.
	const burst = 512 << 10
	sent, done := sendBurst(peer, burst)
	poll0(t, be)
	peak := poller.SpillCap(be, tagA)
	if peak <= poller.SpillMax {
		t.Fatalf("spill capacity after a %d-byte burst = %d, want more than %d: the test did not make a large spill", burst, peak, poller.SpillMax)
	}

	// Serve everything, the burst's tail included.
	recvAll(t, be, sent, done)
	if c := poller.SpillCap(be, tagA); c != 0 {
		t.Errorf("spill capacity once served = %d (peak %d), want 0: a served spill leaves the slot", c, peak)
	}
	if err := be.Remove(tagA); err != nil {
		t.Fatal(err)
	}
	if c := poller.SpillCap(be, tagA); c != 0 {
		t.Errorf("spill capacity after Remove = %d, want 0", c)
	}
}

// spaceProvider gives a fresh 64 KiB buffer to every nil-buffer receive.
// It is Transient, as engine's is: on io_uring its owner's receives are
// one multishot, which spills while the owner is not reading.
type spaceProvider struct{}

func (spaceProvider) Provide() ([]byte, int) { return make([]byte, 64<<10), 0 }
func (spaceProvider) Commit(int, int)        {}
func (spaceProvider) Transient() bool        { return true }

// copyProvider gives a fresh 64 KiB buffer to every nil-buffer receive
// and is not Transient, as aio's swap buffer.
type copyProvider struct{}

func (copyProvider) Provide() ([]byte, int) { return make([]byte, 64<<10), 0 }
func (copyProvider) Commit(int, int)        {}

// TestCopyingOwnerDoesNotSpill: on io_uring, a copying provider's owner
// (aio) receives with one-shot receives, so data that arrives while it is
// not reading stays in the socket instead of being received and spilled
// (held, and copied twice), and still arrives whole and in order.
func TestCopyingOwnerDoesNotSpill(t *testing.T) {
	be, peer := ringBurstPair(t, copyProvider{})

	const burst = 512 << 10
	sent, done := sendBurst(peer, burst)
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("completions %v with no receive asked for", rs)
	}
	if c := poller.SpillCap(be, tagA); c != 0 {
		t.Fatalf("spill capacity with no receive asked for = %d, want 0", c)
	}
	recvAll(t, be, sent, done)
}

// ringBurstPair opens an io_uring backend with p, adds a Unix stream
// socket as tagA and has one nil-buffer receive done on it; it returns the
// backend and the socket's peer. It skips where io_uring is unavailable.
func ringBurstPair(t *testing.T, p poller.Provider) (poller.Backend, net.Conn) {
	t.Helper()
	if err := poller.Available(poller.IOURing); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	checkFDs(t)
	fd, peer := streamPair(t, "unix")
	be, err := poller.OpenKind(poller.IOURing, p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	if poller.SpillCap(be, tagA) < 0 {
		t.Skip("GALE_BACKEND chose another backend")
	}
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Recv(tagA, nil)
	writeAll(t, peer, []byte("arm"))
	wantRecv(t, waitOne(t, be), tagA, "arm")
	return be, peer
}

// sendBurst writes n bytes of a pattern to peer from a new goroutine,
// closing done when the write returns, and gives the writer 100 ms.
func sendBurst(peer net.Conn, n int) (sent []byte, done chan struct{}) {
	sent = bytes.Repeat([]byte("0123456789abcdef"), n/16)
	done = make(chan struct{})
	go func() { defer close(done); peer.Write(sent) }()
	time.Sleep(100 * time.Millisecond)
	return sent, done
}

// recvAll receives tagA's data with nil-buffer receives until all of sent
// has come, waits for done, and checks the bytes and their order.
func recvAll(t *testing.T, be poller.Backend, sent []byte, done chan struct{}) {
	t.Helper()
	var got []byte
	for len(got) < len(sent) {
		be.Recv(tagA, nil)
		r := waitOne(t, be)
		if r.Err != 0 || r.N == 0 {
			t.Fatalf("receive = %v after %d bytes, want data", r, len(got))
		}
		got = append(got, r.Buf...)
	}
	<-done
	if !bytes.Equal(got, sent) {
		t.Fatalf("received %d bytes, not the %d sent, in order", len(got), len(sent))
	}
}
