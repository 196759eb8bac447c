//go:build linux

package poller_test

import (
	"bytes"
	"errors"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

func wantSend(t *testing.T, r result, tag poller.Tag, n int) {
	t.Helper()
	if r.Tag != tag || r.Op != poller.OpSend || r.Err != 0 || r.N != n || r.BufID != -1 {
		t.Fatalf("completion = %v, want tag %#x OpSend N %d Err 0 BufID -1", r, uint64(tag), n)
	}
}

// slowRead reads n bytes in small chunks on another goroutine once start
// is closed, and delivers them (nil on failure).
func slowRead(t *testing.T, peer net.Conn, n int, start <-chan struct{}) <-chan []byte {
	out := make(chan []byte, 1)
	go func() {
		<-start
		got := make([]byte, 0, n)
		chunk := make([]byte, 16<<10)
		peer.SetReadDeadline(time.Now().Add(waitLimit))
		for len(got) < n {
			k, err := peer.Read(chunk[:min(len(chunk), n-len(got))])
			got = append(got, chunk[:k]...)
			if err != nil {
				t.Errorf("peer read after %d of %d bytes: %v", len(got), n, err)
				out <- nil
				return
			}
		}
		out <- got
	}()
	return out
}

// TestSendVectors: a send of several buffers delivers every byte, in
// order, and completes once with the total.
func TestSendVectors(t *testing.T) { backendtest.Run(t, testSendVectors) }

func testSendVectors(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		bufs := [][]byte{[]byte("ab"), {}, []byte("cdefg"), pattern(1000), []byte("z")}
		want := bytes.Join(bufs, nil)
		be.Send(tagA, bufs)
		wantSend(t, waitOne(t, be), tagA, len(want))
		if got := readFull(t, peer, len(want)); !bytes.Equal(got, want) {
			t.Fatalf("peer read %q..., want %q...", got[:10], want[:10])
		}

		be.Send(tagA, [][]byte{[]byte("single")})
		wantSend(t, waitOne(t, be), tagA, 6)
		if got := readFull(t, peer, 6); string(got) != "single" {
			t.Fatalf("peer read %q, want %q", got, "single")
		}

		for _, empty := range [][][]byte{nil, {{}}, {{}, {}}} {
			be.Send(tagA, empty)
			wantSend(t, waitOne(t, be), tagA, 0)
		}
	})
}

// TestSendManyVectors sends more buffers than one writev(2) accepts
// (IOV_MAX, 1024 on Linux).
func TestSendManyVectors(t *testing.T) { backendtest.Run(t, testSendManyVectors) }

func testSendManyVectors(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		const n = 3000
		bufs := make([][]byte, n)
		for i := range bufs {
			bufs[i] = []byte{byte(i), byte(i >> 8)}
		}
		want := bytes.Join(bufs, nil)
		be.Send(tagA, bufs)
		wantSend(t, waitOne(t, be), tagA, len(want))
		if got := readFull(t, peer, len(want)); !bytes.Equal(got, want) {
			t.Fatal("peer read different bytes than sent")
		}
	})
}

// TestSendLarge sends 8 MiB to a peer that starts reading only after the
// send was found parked: it completes once, after every byte was written,
// with N == total.
func TestSendLarge(t *testing.T) { backendtest.Run(t, testSendLarge) }

func testSendLarge(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		shrinkBuffers(t, fd, peer)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		data := pattern(8 << 20)
		half := len(data) / 2
		be.Send(tagA, [][]byte{data[:half], data[half:]})
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v before the peer read anything, want nothing", rs)
		}
		start := make(chan struct{})
		got := slowRead(t, peer, len(data), start)
		close(start)
		wantSend(t, waitOne(t, be), tagA, len(data))
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("extra completions %v", rs)
		}
		select {
		case b := <-got:
			if !bytes.Equal(b, data) {
				t.Fatal("peer read different bytes than sent")
			}
		case <-time.After(waitLimit):
			t.Fatal("peer did not read everything")
		}
	})
}

// TestSendClosedPeer: a send to a peer that is gone fails with EPIPE or
// ECONNRESET, with N == 0 when nothing could be written.
func TestSendClosedPeer(t *testing.T) { backendtest.Run(t, testSendClosedPeer) }

func testSendClosedPeer(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		if tc, ok := peer.(*net.TCPConn); ok {
			tc.SetLinger(0) // reset, so the first write already fails
		}
		peer.Close()
		waitReadable(t, fd) // the close (or reset) has arrived
		be.Send(tagA, [][]byte{[]byte("x")})
		r := waitOne(t, be)
		if r.Op != poller.OpSend || (r.Err != unix.EPIPE && r.Err != unix.ECONNRESET) || r.N != 0 {
			t.Fatalf("completion = %v, want EPIPE or ECONNRESET with N 0", r)
		}
	})
}

// TestSendPeerClosesMidway: the peer reads part of a large send and
// closes; the send fails with N at least what the peer read.
func TestSendPeerClosesMidway(t *testing.T) { backendtest.Run(t, testSendPeerClosesMidway) }

func testSendPeerClosesMidway(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		shrinkBuffers(t, fd, peer)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		data := pattern(8 << 20)
		be.Send(tagA, [][]byte{data})
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		const k = 64 << 10
		if got := readFull(t, peer, k); !bytes.Equal(got, data[:k]) {
			t.Fatal("peer read different bytes than sent")
		}
		peer.Close()
		r := waitOne(t, be)
		if r.Op != poller.OpSend || (r.Err != unix.EPIPE && r.Err != unix.ECONNRESET) {
			t.Fatalf("completion = %v, want EPIPE or ECONNRESET", r)
		}
		if r.N < k || r.N >= len(data) {
			t.Fatalf("completion N = %d, want at least %d (read by the peer) and less than %d", r.N, k, len(data))
		}
	})
}

// TestSendProgressExact: the peer of a unix stream socket stops reading
// (shutdown SHUT_RD) but can still drain what was queued. The failing
// send's N must equal exactly the bytes the peer finds.
func TestSendProgressExact(t *testing.T) { backendtest.Run(t, testSendProgressExact) }

func testSendProgressExact(t *testing.T) {
	checkFDs(t)
	fd, peer := streamPair(t, "unix")
	be := open(t, nil)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	data := pattern(8 << 20)
	be.Send(tagA, [][]byte{data})
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	if err := peer.(*net.UnixConn).CloseRead(); err != nil {
		t.Fatal(err)
	}
	peer.SetReadDeadline(time.Now().Add(waitLimit))
	queued, err := io.ReadAll(peer)
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatalf("peer drain: %v", err)
	}
	if len(queued) == 0 || !bytes.Equal(queued, data[:len(queued)]) {
		t.Fatalf("peer drained %d bytes, want a non-empty prefix of the data", len(queued))
	}
	r := waitOne(t, be)
	if r.Op != poller.OpSend || r.Err != unix.EPIPE || r.N != len(queued) {
		t.Fatalf("completion = %v, want EPIPE with N %d (what the peer drained)", r, len(queued))
	}
}

// TestSendAndRecvSameTag runs a parked send and a parked receive on one
// descriptor: each completes on its own edge.
func TestSendAndRecvSameTag(t *testing.T) { backendtest.Run(t, testSendAndRecvSameTag) }

func testSendAndRecvSameTag(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		shrinkBuffers(t, fd, peer)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		data := pattern(4 << 20)
		be.Send(tagA, [][]byte{data})
		be.Recv(tagA, make([]byte, 64))
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		writeAll(t, peer, []byte("ping"))
		wantRecv(t, waitOne(t, be), tagA, "ping")
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v while the send is parked, want nothing", rs)
		}
		start := make(chan struct{})
		got := slowRead(t, peer, len(data), start)
		close(start)
		wantSend(t, waitOne(t, be), tagA, len(data))
		if b := <-got; !bytes.Equal(b, data) {
			t.Fatal("peer read different bytes than sent")
		}
	})
}
