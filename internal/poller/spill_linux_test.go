//go:build linux

package poller_test

import (
	"bytes"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// TestSpillReleased: on io_uring, data a multishot receive (a Transient
// provider's, engine's) brings while its owner is not reading is spilled:
// up to the multishot's byte limit and a buffer, or, on kernels without
// the limit (before Linux 6.17), a whole batch of the ring's buffers.
// Once that is served, the connection must keep no spill array at all (an idle
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
	if peak == 0 {
		t.Fatalf("spill capacity after a %d-byte burst = 0: the test made no spill", burst)
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

// TestPausedSpillBounded: on io_uring, a Transient provider's owner
// (engine) that stops reading (its backpressure, PauseRead) must hold at
// most a small, fixed spill, whatever its peer sends. A multishot receive
// took every buffer the kernel could fill in a batch (up to 32 buffers of
// 32 KiB each time the socket woke it, and the ring holds 2 MiB) and all
// of it was spilled: about 1 MiB per paused connection. The peer here
// floods as fast as the socket takes it; once reading resumes, every byte
// must arrive, in order. The kernels without the multishot's byte limit
// (before Linux 6.17) keep that behaviour: "unlimited" checks that it
// loses nothing either.
func TestPausedSpillBounded(t *testing.T) {
	if err := poller.Available(poller.IOURing); err != nil {
		t.Skipf("io_uring unavailable: %v", err)
	}
	for _, kind := range kinds {
		for _, limited := range []bool{true, false} {
			name := kind + "/limited"
			if !limited {
				name = kind + "/unlimited"
			}
			t.Run(name, func(t *testing.T) {
				checkFDs(t)
				testPausedSpillBounded(t, kind, limited)
			})
		}
	}
}

func testPausedSpillBounded(t *testing.T, kind string, limited bool) {
	const flood, bound = 32 << 20, 128 << 10
	fd, peer := streamPair(t, kind)
	be, err := poller.OpenKind(poller.IOURing, spaceProvider{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	if poller.SpillCap(be, tagA) < 0 {
		t.Skip("GALE_BACKEND chose another backend")
	}
	switch {
	case !limited:
		poller.NoRecvLimit(be)
	case !poller.RecvLimited(be):
		t.Skip("the multishot receive's byte limit needs Linux 6.17: a paused connection spills up to a batch")
	}
	withPeerFD(t, peer, func(pfd int) { unix.SetsockoptInt(pfd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20) })
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}

	// The owner's one receive takes a byte, then it pauses: it asks for
	// nothing more while the peer floods, until the peer's writes have
	// stalled for 200 ms. The multishot's whole limit is still to come
	// when the owner pauses: the worst case.
	sent := pattern(flood)
	var got []byte
	var bad string
	reading := false
	fn := func(c *poller.Completion) {
		if c.Op != poller.OpRecv || c.Err != 0 || c.N == 0 {
			bad = fmt.Sprintf("completion %v after %d bytes", result{Tag: c.Tag, Op: c.Op, N: c.N, Err: c.Err}, len(got))
			return
		}
		got = append(got, c.Buf...)
		if reading {
			be.Recv(tagA, nil)
		}
	}
	writeAll(t, peer, sent[:1])
	be.Recv(tagA, nil)
	for deadline := time.Now().Add(waitLimit); len(got) == 0 && bad == "" && time.Now().Before(deadline); {
		if err := be.Wait(time.Millisecond, fn); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 {
		t.Fatalf("the first receive brought %d bytes (%s), want 1", len(got), bad)
	}

	var written atomic.Int64
	written.Store(1)
	done := make(chan struct{})
	peer.SetWriteDeadline(time.Now().Add(waitLimit))
	go func() {
		defer close(done)
		for w := 1; w < len(sent); {
			n, err := peer.Write(sent[w:min(len(sent), w+64<<10)])
			w += n
			written.Store(int64(w))
			if err != nil {
				return
			}
		}
	}()
	peak, last, stalled := 0, int64(-1), time.Now()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && bad == ""; {
		if err := be.Wait(time.Millisecond, fn); err != nil {
			t.Fatal(err)
		}
		peak = max(peak, poller.SpillCap(be, tagA))
		if w := written.Load(); w != last {
			last, stalled = w, time.Now()
		} else if time.Since(stalled) > 200*time.Millisecond {
			break
		}
	}
	if bad != "" {
		t.Fatal(bad)
	}
	t.Logf("paused after %d bytes; the peer wrote %d, the spill peaked at %d bytes", len(got), written.Load(), peak)
	if limited && peak > bound {
		t.Errorf("spill capacity peaked at %d bytes while the owner was paused under a flood, want at most %d", peak, bound)
	}

	// Resumed: everything the peer writes arrives, in order.
	reading = true
	be.Recv(tagA, nil)
	for deadline := time.Now().Add(waitLimit); bad == "" && time.Now().Before(deadline); {
		select {
		case <-done:
			if int64(len(got)) == written.Load() {
				deadline = time.Time{}
				continue
			}
		default:
		}
		if err := be.Wait(time.Millisecond, fn); err != nil {
			t.Fatal(err)
		}
	}
	if bad != "" {
		t.Fatal(bad)
	}
	if w := written.Load(); int64(len(got)) != w || !bytes.Equal(got, sent[:w]) {
		t.Fatalf("received %d bytes, want the %d written, in order", len(got), w)
	}
}
