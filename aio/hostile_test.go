package aio_test

// Hostile clients of a push server on aio: one client never reads what a
// publisher sends to everyone. aio, like gaio, queues every write it is
// given; the publisher bounds what it leaves pending per client and frees
// a client past the bound. The watcher must keep serving the others on
// the same loop, complete every pending write of the freed client, and
// hold no memory beyond the publisher's buffers.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

const (
	// stPushCap is the most output the publisher leaves pending on one
	// client; past it, it frees the client.
	stPushCap = 1 << 20
	// stPushMsg is the size of a message.
	stPushMsg = 4 << 10
	// stPushWindow is how far the publisher runs ahead of its slowest
	// reader (the non-reader aside).
	stPushWindow = 256 << 10
	// stPushReaders is the number of clients that read.
	stPushReaders = 3
	// stPushTotal is what the publisher sends each client: 32 MiB, far
	// over what the memory bound below allows; 256 MiB with GALE_LONG=1.
	stPushTotal, stPushTotalLong = 32 << 20, 256 << 20
	// stPushHeapSlack is the heap beyond the pending messages that the
	// run may take at its peak: garbage between collections (the runtime
	// lets the heap grow to 4 MiB before its first collection, and to
	// twice what was live after one) and the readers' buffers.
	stPushHeapSlack = 8 << 20
)

// stPushPeer is a client as the publisher sees it; it is the context of
// the client's writes.
type stPushPeer struct {
	conn      net.Conn
	pending   atomic.Int64 // bytes submitted and not completed
	maxPend   int64        // the most pending after a submission (publisher only)
	freed     atomic.Bool
	submitted atomic.Int64 // writes submitted
	completed atomic.Int64 // write completions
	written   atomic.Int64 // bytes they wrote
	closedErr atomic.Int64 // of which ErrConnClosed
	otherErr  atomic.Pointer[error]
}

// TestHostileNonReader pushes numbered messages to three reading clients
// and one that never reads, all on one loop, through Write requests on
// fresh buffers. It checks that the non-reader's pending output is freed
// at the publisher's bound, that every one of its writes completes (with
// ErrConnClosed for those cut by Free) and the watcher's pending count
// falls back to 0, that the readers get every message in order meanwhile,
// and that the heap stays under the bound plus the readers' window and
// stPushHeapSlack.
func TestHostileNonReader(t *testing.T) { backendtest.Run(t, testHostileNonReader) }

func testHostileNonReader(t *testing.T) {
	total := stPushTotal
	if stLong() {
		total = stPushTotalLong
	}
	w := stWatcher(t, aio.Config{Loops: 1})
	peers, clients := stPushClients(t, stPushReaders+1)
	mute := peers[stPushReaders]
	if tc, ok := clients[stPushReaders].(*net.TCPConn); ok {
		tc.SetReadBuffer(4 << 10) // the kernel absorbs little of what it is sent
	}
	consumed := stPushConsume(t, w)

	base := leaktest.Measure()
	peak := stSampleHeap(t)
	var got [stPushReaders]atomic.Int64
	var wg sync.WaitGroup
	for i := range stPushReaders {
		wg.Go(func() {
			if err := stReadPush(clients[i], total, &got[i]); err != nil {
				t.Errorf("reader %d: %v", i, err)
			}
		})
	}
	err := stPublish(w, peers, total, got[:])
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	heapPeak := peak()
	stWaitFor(t, w, "every write completed", func() bool { return w.Stats().Total().PendingWrites == 0 })
	// The watcher counts a write done when it completes; WaitIO hands the
	// completion over after. Close drops what it has not handed over, so
	// wait for the consumer to have seen every one.
	stWaitFor(t, w, "every completion consumed", func() bool {
		for _, p := range peers {
			if p.completed.Load() != p.submitted.Load() {
				return false
			}
		}
		return true
	})
	w.Close()
	<-consumed

	t.Logf("%d MiB pushed to %d readers; the non-reader's socket took %d bytes, then it was freed with %d bytes pending (bound %d), %d of its writes cut by Free; heap %.1f MiB at rest, peak +%.1f MiB",
		total>>20, stPushReaders, mute.written.Load(), mute.maxPend, stPushCap, mute.closedErr.Load(), stMiB(base.Heap), stMiB(heapPeak-base.Heap))
	stCheckPeers(t, peers, total)
	if limit := int64(stPushCap + stPushReaders*stPushWindow + stPushHeapSlack); heapPeak-base.Heap > limit {
		t.Errorf("heap grew by %d bytes at its peak, want at most %d (the bound, the readers' windows and %d of slack)",
			heapPeak-base.Heap, limit, stPushHeapSlack)
	}
}

// stCheckPeers checks what the publisher's peers saw: the non-reader (the
// last) freed within the bound with writes cut, the readers never, and
// every write of every peer completed.
func stCheckPeers(t *testing.T, peers []*stPushPeer, total int) {
	t.Helper()
	mute := peers[len(peers)-1]
	if !mute.freed.Load() || mute.maxPend > stPushCap || mute.closedErr.Load() == 0 {
		t.Errorf("non-reader: freed %v with at most %d bytes pending and %d writes cut by Free, want freed within %d, writes cut",
			mute.freed.Load(), mute.maxPend, mute.closedErr.Load(), stPushCap)
	}
	for i, p := range peers {
		if e := p.otherErr.Load(); e != nil {
			t.Errorf("peer %d: a write completed with %v, want nil or ErrConnClosed", i, *e)
		}
		if s, c := p.submitted.Load(), p.completed.Load(); s != c || p.pending.Load() != 0 {
			t.Errorf("peer %d: %d writes submitted, %d completed, %d bytes pending, want every write completed", i, s, c, p.pending.Load())
		}
		if p == mute {
			continue
		}
		if p.freed.Load() || p.completed.Load() != int64(total/stPushMsg) {
			t.Errorf("reader %d: freed %v, %d writes completed, want not freed, %d", i, p.freed.Load(), p.completed.Load(), total/stPushMsg)
		}
	}
}

// stPushClients connects n clients to a loopback listener and returns the
// server's ends, in the order of the clients, with the clients' ends.
func stPushClients(t *testing.T, n int) ([]*stPushPeer, []net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v, want nil", err)
	}
	defer ln.Close()
	peers, clients := make([]*stPushPeer, n), make([]net.Conn, n)
	for i := range n {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), stTimeout)
		if err != nil {
			t.Fatalf("Dial = %v, want nil", err)
		}
		t.Cleanup(func() { c.Close() })
		s, err := ln.Accept()
		if err != nil {
			t.Fatalf("Accept = %v, want nil", err)
		}
		t.Cleanup(func() { s.Close() }) // fails once delegated: the watcher closes it
		peers[i], clients[i] = &stPushPeer{conn: s}, c
	}
	return peers, clients
}

// stPushConsume collects w's completions until it is closed, crediting
// each write to its peer. The returned channel closes when it ends.
func stPushConsume(t *testing.T, w *aio.Watcher) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			res, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, r := range res {
				p := r.Context.(*stPushPeer)
				p.pending.Add(-int64(len(r.Buffer)))
				p.completed.Add(1)
				p.written.Add(int64(r.Size))
				switch {
				case r.Error == aio.ErrConnClosed:
					p.closedErr.Add(1)
				case r.Error != nil:
					p.otherErr.CompareAndSwap(nil, &r.Error)
				}
			}
		}
	}()
	t.Cleanup(func() { w.Close(); <-done })
	return done
}

// stPublish writes total bytes of numbered messages, each in a buffer of
// its own, to every peer not freed, waiting only for readers more than
// stPushWindow behind. A peer that would pass stPushCap of pending output
// is freed instead. It fails if a reader makes no progress for stTimeout.
func stPublish(w *aio.Watcher, peers []*stPushPeer, total int, got []atomic.Int64) error {
	for seq := 0; seq*stPushMsg < total; seq++ {
		for since := time.Now(); stSlowestPush(got) < int64(seq*stPushMsg-stPushWindow) || stBacklogged(peers[:len(peers)-1]); {
			if time.Since(since) > stTimeout {
				return fmt.Errorf("a reader stalled %d bytes behind message %d (pending %v)", seq*stPushMsg-int(stSlowestPush(got)), seq, stPending(peers))
			}
			time.Sleep(50 * time.Microsecond)
		}
		msg := make([]byte, stPushMsg)
		stStampPush(msg, seq)
		for _, p := range peers {
			if p.freed.Load() {
				continue
			}
			if p.pending.Load()+stPushMsg > stPushCap {
				p.freed.Store(true)
				if err := w.Free(p.conn); err != nil {
					return fmt.Errorf("Free = %v, want nil", err)
				}
				continue
			}
			p.maxPend = max(p.maxPend, p.pending.Add(stPushMsg))
			p.submitted.Add(1)
			if err := w.Write(p, p.conn, msg); err != nil {
				return fmt.Errorf("Write = %v, want nil", err)
			}
		}
	}
	return nil
}

// stBacklogged reports whether a reader's pending writes would pass
// stPushCap with one more message: its bytes have reached it, but the
// completions that say so wait for the consumer, which a busy machine
// delays. The publisher waits for them rather than free a reader.
func stBacklogged(readers []*stPushPeer) bool {
	for _, p := range readers {
		if p.pending.Load()+stPushMsg > stPushCap {
			return true
		}
	}
	return false
}

// stPending returns the peers' pending bytes, for messages.
func stPending(peers []*stPushPeer) []int64 {
	n := make([]int64, len(peers))
	for i, p := range peers {
		n[i] = p.pending.Load()
	}
	return n
}

func stSlowestPush(got []atomic.Int64) int64 {
	m := got[0].Load()
	for i := range got[1:] {
		m = min(m, got[i+1].Load())
	}
	return m
}

// stStampPush fills msg with message seq: its number, then bytes derived
// from it.
func stStampPush(msg []byte, seq int) {
	binary.BigEndian.PutUint64(msg, uint64(seq))
	for i := 8; i < len(msg); i++ {
		msg[i] = byte(seq) + byte(i)
	}
}

// stReadPush reads total bytes of messages from r, checking that every
// message comes, in order and intact, and counts them in got.
func stReadPush(r net.Conn, total int, got *atomic.Int64) error {
	r.SetReadDeadline(time.Now().Add(10 * stTimeout))
	buf, want := make([]byte, stPushMsg), make([]byte, stPushMsg)
	for seq := 0; seq*stPushMsg < total; seq++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("message %d: %w", seq, err)
		}
		stStampPush(want, seq)
		if !bytes.Equal(buf, want) {
			return fmt.Errorf("message %d differs: got number %d", seq, binary.BigEndian.Uint64(buf))
		}
		got.Add(stPushMsg)
	}
	return nil
}

// stSampleHeap samples the heap every millisecond until the returned
// function is called, which returns the peak, or the test ends.
func stSampleHeap(t testing.TB) func() int64 {
	var peak int64
	stop, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	end := func() {
		once.Do(func() { close(stop) })
		<-done
	}
	t.Cleanup(end)
	go func() {
		defer close(done)
		for {
			peak = max(peak, leaktest.HeapNow())
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() int64 {
		end()
		return peak
	}
}
