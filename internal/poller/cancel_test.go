//go:build linux

package poller_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"testing"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// TestCancelIdle: Cancel with nothing in flight, or on a tag never added,
// delivers nothing.
func TestCancelIdle(t *testing.T) { backendtest.Run(t, testCancelIdle) }

func testCancelIdle(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, _ := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Cancel(tagA, poller.OpRecv)
		be.Cancel(tagA, poller.OpSend)
		be.Cancel(poller.MakeTag(5, 1), poller.OpRecv)
		be.Cancel(poller.MakeTag(0, 2), poller.OpSend) // stale generation
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) after idle cancels delivered %v, want nothing", rs)
		}
	})
}

// TestCancelRecv: a parked receive ends with ECANCELED and N == 0; the
// data that arrives later goes to the next receive.
func TestCancelRecv(t *testing.T) { backendtest.Run(t, testCancelRecv) }

func testCancelRecv(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		p := newTestProvider()
		be := open(t, p)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		for _, buf := range [][]byte{make([]byte, 64), nil} {
			p.give(1, 64)
			be.Recv(tagA, buf)
			if rs := poll0(t, be); len(rs) != 0 {
				t.Fatalf("Wait(0) delivered %v, want nothing", rs)
			}
			be.Cancel(tagA, poller.OpRecv)
			be.Cancel(tagA, poller.OpRecv) // the second finds nothing
			rs := poll0(t, be)
			if len(rs) != 1 {
				t.Fatalf("Wait(0) after Cancel delivered %v, want one completion", rs)
			}
			if r := rs[0]; r.Tag != tagA || r.Op != poller.OpRecv || r.Err != unix.ECANCELED || r.N != 0 || r.BufID != -1 || len(r.Buf) != 0 {
				t.Fatalf("cancelled receive = %v, want ECANCELED, N 0, BufID -1, no bytes", r)
			}
		}
		for _, c := range p.calls {
			if c != "provide 1" {
				t.Fatalf("provider calls = %v, want no commit", p.calls)
			}
		}
		writeAll(t, peer, []byte("kept"))
		be.Recv(tagA, make([]byte, 64))
		wantRecv(t, waitOne(t, be), tagA, "kept")
	})
}

// TestCancelSend: a parked send ends with ECANCELED and N == the bytes
// written so far; the stream carries exactly those bytes, then what the
// next send writes.
func TestCancelSend(t *testing.T) { backendtest.Run(t, testCancelSend) }

func testCancelSend(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		shrinkBuffers(t, fd, peer)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		data := pattern(8 << 20)
		be.Send(tagA, [][]byte{data[:1000], data[1000:]})
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		be.Cancel(tagA, poller.OpSend)
		be.Cancel(tagA, poller.OpSend)
		rs := poll0(t, be)
		if len(rs) != 1 {
			t.Fatalf("Wait(0) after Cancel delivered %v, want one completion", rs)
		}
		r := rs[0]
		if r.Tag != tagA || r.Op != poller.OpSend || r.Err != unix.ECANCELED || r.BufID != -1 {
			t.Fatalf("cancelled send = %v, want ECANCELED, BufID -1", r)
		}
		if r.N <= 0 || r.N >= len(data) {
			t.Fatalf("cancelled send N = %d, want the partial progress (0 < N < %d)", r.N, len(data))
		}
		be.Send(tagA, [][]byte{[]byte("tail")})
		// The peer must see exactly data[:N] followed by "tail".
		start := make(chan struct{})
		close(start)
		read := slowRead(t, peer, r.N+4, start)
		wantSend(t, waitOne(t, be), tagA, 4)
		got := <-read
		if len(got) != r.N+4 || !bytes.Equal(got[:r.N], data[:r.N]) || string(got[r.N:]) != "tail" {
			t.Fatalf("peer read %d bytes, want the %d-byte prefix then \"tail\"", len(got), r.N)
		}
		if n, err := peerRecvNow(t, peer, make([]byte, 1)); err != unix.EAGAIN {
			t.Fatalf("peer found %d more bytes (err %v), want EAGAIN", n, err)
		}
	})
}

// TestCancelAfterCompletion: Cancel of an operation that completed at
// submission is a no-op; there is exactly one, successful, completion.
func TestCancelAfterCompletion(t *testing.T) { backendtest.Run(t, testCancelAfterCompletion) }

func testCancelAfterCompletion(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		writeAll(t, peer, []byte("now"))
		waitReadable(t, fd)
		be.Recv(tagA, make([]byte, 64))
		be.Send(tagA, [][]byte{[]byte("out")})
		be.Cancel(tagA, poller.OpRecv)
		be.Cancel(tagA, poller.OpSend)
		rs := poll0(t, be)
		if len(rs) != 2 {
			t.Fatalf("Wait(0) delivered %v, want two completions", rs)
		}
		for _, r := range rs {
			switch r.Op {
			case poller.OpRecv:
				wantRecv(t, r, tagA, "now")
			case poller.OpSend:
				wantSend(t, r, tagA, 3)
			}
		}
		if rs[0].Op == rs[1].Op {
			t.Fatalf("completions %v, want one receive and one send", rs)
		}
	})
}
