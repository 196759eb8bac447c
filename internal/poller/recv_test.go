//go:build linux

package poller_test

import (
	"fmt"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

var tagA = poller.MakeTag(0, 1)

func forKinds(t *testing.T, f func(t *testing.T, kind string)) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			checkFDs(t)
			f(t, kind)
		})
	}
}

func wantRecv(t *testing.T, r result, tag poller.Tag, data string) {
	t.Helper()
	if r.Tag != tag || r.Op != poller.OpRecv || r.Err != 0 || r.N != len(data) || string(r.Buf) != data {
		t.Fatalf("completion = %v, want tag %#x OpRecv N %d %q", r, uint64(tag), len(data), data)
	}
}

// TestRecvImmediate: a receive submitted while data is queued completes at
// once, into the caller's buffer, delivered by the next Wait(0).
func TestRecvImmediate(t *testing.T) { backendtest.Run(t, testRecvImmediate) }

func testRecvImmediate(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		writeAll(t, peer, []byte("hello"))
		waitReadable(t, fd)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		be.Recv(tagA, buf)
		rs := poll0(t, be)
		if len(rs) != 1 {
			t.Fatalf("Wait(0) delivered %v, want one completion", rs)
		}
		wantRecv(t, rs[0], tagA, "hello")
		if rs[0].BufID != -1 {
			t.Errorf("BufID = %d, want -1 for a caller's buffer", rs[0].BufID)
		}
		if rs[0].bufAt != &buf[0] {
			t.Errorf("Buf does not alias the submitted buffer")
		}
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("second Wait(0) delivered %v, want nothing", rs)
		}
	})
}

// TestRecvParked: a receive submitted on an empty socket waits, and
// completes once data arrives.
func TestRecvParked(t *testing.T) { backendtest.Run(t, testRecvParked) }

func testRecvParked(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tagA, make([]byte, 64))
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) on an empty socket delivered %v, want nothing", rs)
		}
		writeAll(t, peer, []byte("later"))
		wantRecv(t, waitOne(t, be), tagA, "later")
	})
}

// TestRecvAfterShortRead checks the "drained" shortcut: after a short read
// a new receive waits for the next edge instead of reading, and still
// completes when data arrives, here written by another goroutine while
// Wait blocks.
func TestRecvAfterShortRead(t *testing.T) { backendtest.Run(t, testRecvAfterShortRead) }

func testRecvAfterShortRead(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		writeAll(t, peer, []byte("abc"))
		waitReadable(t, fd)
		be.Recv(tagA, make([]byte, 64)) // short read: 3 of 64
		wantRecv(t, waitOne(t, be), tagA, "abc")

		be.Recv(tagA, make([]byte, 64))
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) after a short read delivered %v, want nothing", rs)
		}
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("second Wait(0) delivered %v, want nothing", rs)
		}
		write := make(chan struct{})
		wrote := make(chan error, 1)
		go func() {
			<-write
			peer.SetWriteDeadline(time.Now().Add(waitLimit))
			_, err := peer.Write([]byte("def"))
			wrote <- err
		}()
		close(write)
		wantRecv(t, waitOne(t, be), tagA, "def")
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}

		// A read that fills the buffer proves nothing: the next receive
		// reads at once.
		writeAll(t, peer, []byte("12345678"))
		waitReadable(t, fd)
		be.Recv(tagA, make([]byte, 4))
		r := waitOne(t, be)
		wantRecv(t, r, tagA, "1234")
		be.Recv(tagA, make([]byte, 4))
		rs := poll0(t, be)
		if len(rs) != 1 {
			t.Fatalf("Wait(0) after a full read delivered %v, want the next 4 bytes at once", rs)
		}
		wantRecv(t, rs[0], tagA, "5678")
	})
}

// TestRecvEOF: a peer that closes gives N == 0, Err == 0, and so does
// every receive after that.
func TestRecvEOF(t *testing.T) { backendtest.Run(t, testRecvEOF) }

func testRecvEOF(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tagA, make([]byte, 64))
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		peer.Close()
		wantRecv(t, waitOne(t, be), tagA, "")
		for range 2 {
			be.Recv(tagA, make([]byte, 64))
			wantRecv(t, waitOne(t, be), tagA, "")
		}
	})
}

// TestRecvEOFAfterShortRead: the peer writes and closes at once, while a
// receive is parked. The receive gets the data in a short read; the end of
// file was reported by the same edge, so no later edge announces it: the
// next receive must still see it.
func TestRecvEOFAfterShortRead(t *testing.T) { backendtest.Run(t, testRecvEOFAfterShortRead) }

func testRecvEOFAfterShortRead(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tagA, make([]byte, 64))
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		writeAll(t, peer, []byte("last"))
		peer.Close()
		waitReadable(t, fd)
		if kind == "tcp" {
			// Let the FIN follow the data before the backend looks.
			waitRDHUP(t, fd)
		}
		wantRecv(t, waitOne(t, be), tagA, "last")
		be.Recv(tagA, make([]byte, 64))
		// The end of file is already queued: no need to wait long.
		rs := waitNWithin(t, be, 1, time.Second)
		wantRecv(t, rs[0], tagA, "")
	})
}

// waitRDHUP blocks, bounded, until the peer's end of file has arrived on fd.
func waitRDHUP(t *testing.T, fd int) {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
	for {
		n, err := unix.Poll(pfd, int(waitLimit/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("poll(%d, POLLRDHUP) = %d, %v: no end of file within %v", fd, n, err, waitLimit)
		}
		return
	}
}

// TestRecvEOFHalfClose: a peer that only shuts down its writing side also
// gives end of file.
func TestRecvEOFHalfClose(t *testing.T) { backendtest.Run(t, testRecvEOFHalfClose) }

func testRecvEOFHalfClose(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tagA, make([]byte, 64))
		if err := peer.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatal(err)
		}
		wantRecv(t, waitOne(t, be), tagA, "")
	})
}

// TestRecvReset: a TCP peer that aborts the connection gives ECONNRESET.
func TestRecvReset(t *testing.T) { backendtest.Run(t, testRecvReset) }

func testRecvReset(t *testing.T) {
	checkFDs(t)
	fd, peer := streamPair(t, "tcp")
	be := open(t, nil)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Recv(tagA, make([]byte, 64))
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	r := waitOne(t, be)
	if r.Tag != tagA || r.Op != poller.OpRecv || r.Err != unix.ECONNRESET || r.N != 0 {
		t.Fatalf("completion = %v, want ECONNRESET with N 0", r)
	}
}

// testProvider lends numbered buffers and records the calls made to it.
type testProvider struct {
	free  []int // ids of buffers that may be provided, used last first
	bufs  map[int][]byte
	calls []string
}

func newTestProvider() *testProvider { return &testProvider{bufs: map[int][]byte{}} }

// give makes buffer id (of n bytes) available.
func (p *testProvider) give(id, n int) {
	if p.bufs[id] == nil {
		p.bufs[id] = make([]byte, n)
	}
	p.free = append(p.free, id)
}

func (p *testProvider) Provide() ([]byte, int) {
	if len(p.free) == 0 {
		p.calls = append(p.calls, "provide nil")
		return nil, -1
	}
	id := p.free[len(p.free)-1]
	p.calls = append(p.calls, fmt.Sprint("provide ", id))
	return p.bufs[id], id
}

func (p *testProvider) Commit(id, n int) {
	p.calls = append(p.calls, fmt.Sprint("commit ", id, " ", n))
	for i, f := range p.free {
		if f == id {
			p.free = append(p.free[:i], p.free[i+1:]...)
			break
		}
	}
}

func (p *testProvider) takeCalls() string {
	s := fmt.Sprint(p.calls)
	p.calls = nil
	return s
}

// TestRecvProvider: a receive without a buffer reads into the Provider's
// space and commits what it used; with no space it completes with NoSpace
// and works again once space is back.
func TestRecvProvider(t *testing.T) { backendtest.Run(t, testRecvProvider) }

func testRecvProvider(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		p := newTestProvider()
		be := open(t, p)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}

		// Immediate, with space.
		p.give(7, 32)
		writeAll(t, peer, []byte("data"))
		waitReadable(t, fd)
		be.Recv(tagA, nil)
		r := waitOne(t, be)
		wantRecv(t, r, tagA, "data")
		if r.BufID != 7 || r.bufAt != &p.bufs[7][0] {
			t.Fatalf("BufID = %d (aliasing the provided buffer: %v), want 7 (true)", r.BufID, r.bufAt == &p.bufs[7][0])
		}
		if got, want := p.takeCalls(), "[provide 7 commit 7 4]"; got != want {
			t.Fatalf("provider calls = %s, want %s", got, want)
		}

		// Immediate, no space: NoSpace, then a resubmission succeeds.
		writeAll(t, peer, []byte("more"))
		waitReadable(t, fd)
		be.Recv(tagA, nil)
		r = waitOne(t, be)
		if r.Tag != tagA || r.Op != poller.OpRecv || r.Err != poller.NoSpace || r.N != 0 || r.BufID != -1 {
			t.Fatalf("completion without space = %v, want NoSpace, N 0, BufID -1", r)
		}
		if got, want := p.takeCalls(), "[provide nil]"; got != want {
			t.Fatalf("provider calls = %s, want %s", got, want)
		}
		p.give(8, 32)
		be.Recv(tagA, nil)
		r = waitOne(t, be)
		wantRecv(t, r, tagA, "more")
		if r.BufID != 8 {
			t.Fatalf("BufID = %d, want 8", r.BufID)
		}
		if got, want := p.takeCalls(), "[provide 8 commit 8 4]"; got != want {
			t.Fatalf("provider calls = %s, want %s", got, want)
		}

		// Parked with space, and no space left when the data arrives.
		p.give(9, 2)
		be.Recv(tagA, nil)
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		p.free = nil
		writeAll(t, peer, []byte("late"))
		r = waitOne(t, be)
		if r.Err != poller.NoSpace || r.N != 0 || r.BufID != -1 {
			t.Fatalf("parked completion without space = %v, want NoSpace, N 0, BufID -1", r)
		}
		if got := p.takeCalls(); !strings.HasSuffix(got, "provide nil]") || strings.Contains(got, "commit") {
			t.Fatalf("provider calls = %s, want no commit, ending with the failed provide", got)
		}
		p.give(9, 2) // smaller than the data: two receives
		be.Recv(tagA, nil)
		r = waitOne(t, be)
		wantRecv(t, r, tagA, "la")
		p.give(9, 2)
		be.Recv(tagA, nil)
		r = waitOne(t, be)
		wantRecv(t, r, tagA, "te")
		if got, want := p.takeCalls(), "[provide 9 commit 9 2 provide 9 commit 9 2]"; got != want {
			t.Fatalf("provider calls = %s, want %s", got, want)
		}

		// End of file commits nothing.
		p.give(10, 32)
		peer.Close()
		be.Recv(tagA, nil)
		r = waitOne(t, be)
		if r.Err != 0 || r.N != 0 {
			t.Fatalf("end of file with a provided buffer = %v, want N 0, Err 0", r)
		}
		for _, c := range p.calls {
			if strings.HasPrefix(c, "commit") {
				t.Fatalf("provider calls at end of file = %v, want no commit", p.calls)
			}
		}
	})
}

// TestRecvManyReady parks receives on more descriptors than one batch of
// events holds and makes them all ready at once.
func TestRecvManyReady(t *testing.T) { backendtest.Run(t, testRecvManyReady) }

func testRecvManyReady(t *testing.T) {
	checkFDs(t)
	const n = 300
	be := open(t, nil)
	peers := make([]int, n)
	for i := range n {
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			unix.Close(fds[0])
			unix.Close(fds[1])
		})
		peers[i] = fds[1]
		tag := poller.MakeTag(uint32(i), 1)
		if err := be.Add(fds[0], tag, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tag, make([]byte, 16))
	}
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	for i, p := range peers {
		if _, err := unix.Write(p, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	rs := waitN(t, be, n)
	seen := make([]bool, n)
	for _, r := range rs {
		i := r.Tag.Slot()
		if int(i) >= n || seen[i] || r.N != 1 || r.Buf[0] != byte(i) || r.Tag.Gen() != 1 {
			t.Fatalf("unexpected completion %v", r)
		}
		seen[i] = true
	}
	if len(rs) != n {
		t.Fatalf("%d completions, want %d", len(rs), n)
	}
}
