//go:build linux

package poller_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// TestCancelTakesReadAhead: an owner that hands its socket over (engine's
// Detach, netconn's takeBuffered) submits a receive and cancels it at
// once, takes what that receive brings, and removes the tag; the new
// owner reads the socket. No byte may be lost between them. On io_uring a
// Transient provider's owner receives through a multishot that goes on
// while the owner is not reading, and spills what it takes: the cancelled
// receive must bring all of that, however much, and once it has
// completed the backend must take nothing more from the socket, or the
// bytes are dropped with the tag.
func TestCancelTakesReadAhead(t *testing.T) { backendtest.Run(t, testCancelTakesReadAhead) }

func testCancelTakesReadAhead(t *testing.T) {
	for _, burst := range []int{20 << 10, 512 << 10} { // within the spill's bound, and far past it
		t.Run(fmt.Sprintf("%dKiB", burst>>10), func(t *testing.T) { testCancelTakesBurst(t, burst) })
	}
}

func testCancelTakesBurst(t *testing.T, burst int) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, spaceProvider{})
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tagA, nil)
		writeAll(t, peer, []byte("arm"))
		wantRecv(t, waitOne(t, be), tagA, "arm")

		// The owner is not reading; the backend may receive ahead.
		sent := pattern(burst)
		done := make(chan struct{})
		go func() { defer close(done); peer.Write(sent) }()
		for range 10 {
			if rs := waitFor(t, be, 10*time.Millisecond); len(rs) != 0 {
				t.Fatalf("completions %v with no receive asked for", rs)
			}
		}
		// The hand-over: one receive, cancelled at once.
		be.Recv(tagA, nil)
		be.Cancel(tagA, poller.OpRecv)
		r := waitOne(t, be)
		if r.Op != poller.OpRecv || (r.Err != 0 && r.Err != unix.ECANCELED) {
			t.Fatalf("the cancelled receive = %v, want data or ECANCELED", r)
		}
		got := append([]byte(nil), r.Buf...)
		want := sent
		if burst < poller.SpillMax {
			// The burst fitted in the socket: the peer can write
			// again. What arrives now must stay in the socket.
			select {
			case <-done:
			case <-time.After(waitLimit):
				t.Fatal("the peer's write of the burst did not return")
			}
			writeAll(t, peer, []byte("tail"))
			want = append(append([]byte(nil), sent...), "tail"...)
			for range 5 {
				if rs := waitFor(t, be, 10*time.Millisecond); len(rs) != 0 {
					t.Fatalf("completions %v after the cancelled receive", rs)
				}
			}
		}
		if err := be.Remove(tagA); err != nil {
			t.Fatal(err)
		}
		got = append(got, readFD(t, fd, len(want)-len(got), done)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("the cancelled receive brought %d bytes and the socket held %d more, want the %d sent, in order: bytes the backend took were lost",
				len(r.Buf), len(got)-len(r.Buf), len(want))
		}
	})
}

// waitFor runs one Wait of at most d and returns what it delivered.
func waitFor(t *testing.T, be poller.Backend, d time.Duration) []result {
	t.Helper()
	var rs []result
	if err := be.Wait(d, record(&rs)); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return rs
}

// readFD reads up to n bytes from the non-blocking socket fd, stopping
// early once the peer's writer is done and the socket is empty.
func readFD(t *testing.T, fd, n int, done <-chan struct{}) []byte {
	t.Helper()
	var got []byte
	buf := make([]byte, 64<<10)
	deadline := time.Now().Add(waitLimit)
	for len(got) < n && time.Now().Before(deadline) {
		k, err := unix.Read(fd, buf)
		switch {
		case k > 0:
			got = append(got, buf[:k]...)
		case err == unix.EAGAIN:
			select {
			case <-done:
				k, _ := unix.Read(fd, buf)
				if k <= 0 {
					return got
				}
				got = append(got, buf[:k]...)
			default:
				time.Sleep(time.Millisecond)
			}
		default:
			t.Fatalf("read = %d, %v", k, err)
		}
	}
	return got
}
