package aio_test

// Hostile clients of a push server on aio: one client never reads what a
// publisher sends to everyone. aio, like gaio, queues every write it is
// given; the publisher bounds what it leaves pending per client and frees
// a client past the bound. The watcher must keep serving the others on
// the same loop, complete every pending write of the freed client, and
// hold no memory beyond the publisher's buffers.

import (
	"fmt"
	"net"
	"sync/atomic"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
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

// TestHostileNonReader pushes stresstest.Hostile's numbered messages to
// its reading clients and the one that never reads, all on one loop,
// through Write requests on fresh buffers; the publisher frees a client
// that would have more than stresstest.HostileCap pending. Hostile checks
// that the readers get every message in order meanwhile and that the heap
// stays under the cap plus the readers' windows and a slack. The test
// checks that the non-reader's pending output is freed at the cap, and
// that every one of its writes completes (with ErrConnClosed for those
// cut by Free) and the watcher's pending count falls back to 0.
func TestHostileNonReader(t *testing.T) { backendtest.Run(t, testHostileNonReader) }

func testHostileNonReader(t *testing.T) {
	const readers = stresstest.HostileReaders
	w := stWatcher(t, aio.Config{Loops: 1})
	consumed := stPushConsume(t, w)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v, want nil", err)
	}
	defer ln.Close()
	peers := make([]*stPushPeer, readers+1)
	run := stresstest.Hostile(t, stresstest.HostileTarget{
		Addr:    ln.Addr(),
		Timeout: stTimeout,
		Opened: func(i int) {
			s, err := ln.Accept()
			if err != nil {
				t.Fatalf("Accept = %v, want nil", err)
			}
			t.Cleanup(func() { s.Close() }) // fails once delegated: the watcher closes it
			peers[i] = &stPushPeer{conn: s}
		},
		Send:       func(seq int) error { return stPublish(w, peers, seq) },
		Backlogged: func() bool { return stBacklogged(peers[:readers]) },
		State:      func() string { return fmt.Sprint("pending ", stPending(peers)) },
	})
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

	mute := peers[readers]
	t.Logf("the non-reader's socket took %d bytes, then it was freed with %d bytes pending (bound %d), %d of its writes cut by Free",
		mute.written.Load(), mute.maxPend, stresstest.HostileCap, mute.closedErr.Load())
	stCheckPeers(t, peers, run.Total)
}

// stCheckPeers checks what the publisher's peers saw: the non-reader (the
// last) freed within the bound with writes cut, the readers never, and
// every write of every peer completed.
func stCheckPeers(t *testing.T, peers []*stPushPeer, total int) {
	t.Helper()
	mute := peers[len(peers)-1]
	if !mute.freed.Load() || mute.maxPend > stresstest.HostileCap || mute.closedErr.Load() == 0 {
		t.Errorf("non-reader: freed %v with at most %d bytes pending and %d writes cut by Free, want freed within %d, writes cut",
			mute.freed.Load(), mute.maxPend, mute.closedErr.Load(), stresstest.HostileCap)
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
		if p.freed.Load() || p.completed.Load() != int64(total/stresstest.HostileMsg) {
			t.Errorf("reader %d: freed %v, %d writes completed, want not freed, %d", i, p.freed.Load(), p.completed.Load(), total/stresstest.HostileMsg)
		}
	}
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

// stPublish writes message seq, in a buffer of its own, to every peer
// not freed. A peer that would pass stresstest.HostileCap of pending
// output is freed instead.
func stPublish(w *aio.Watcher, peers []*stPushPeer, seq int) error {
	msg := make([]byte, stresstest.HostileMsg)
	stresstest.Stamp(msg, seq)
	for _, p := range peers {
		if p.freed.Load() {
			continue
		}
		if p.pending.Load()+stresstest.HostileMsg > stresstest.HostileCap {
			p.freed.Store(true)
			if err := w.Free(p.conn); err != nil {
				return fmt.Errorf("Free = %v, want nil", err)
			}
			continue
		}
		p.maxPend = max(p.maxPend, p.pending.Add(stresstest.HostileMsg))
		p.submitted.Add(1)
		if err := w.Write(p, p.conn, msg); err != nil {
			return fmt.Errorf("Write = %v, want nil", err)
		}
	}
	return nil
}

// stBacklogged reports whether a reader's pending writes would pass
// stresstest.HostileCap with one more message: its bytes have reached
// it, but the completions that say so wait for the consumer, which a busy
// machine delays. The publisher waits for them rather than free a reader.
func stBacklogged(readers []*stPushPeer) bool {
	for _, p := range readers {
		if p.pending.Load()+stresstest.HostileMsg > stresstest.HostileCap {
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
