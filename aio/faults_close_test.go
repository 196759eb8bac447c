//go:build unix

package aio_test

// Close of a watcher with thousands of requests pending.

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestCloseManyPending checks Close of a watcher serving 5,000
// connections, each with a read pending, and 50 of them with a 1 MiB
// write in flight to a peer that never reads and a second write queued
// behind it: Close returns promptly (the time is logged), the pending
// requests are dropped as documented (no completion after Close: WaitIO
// returns ErrWatcherClosed, and so does every later call), every
// descriptor the watcher held is closed (each peer reads what was
// written, then end of file), and no goroutine or descriptor is left.
func TestCloseManyPending(t *testing.T) { backendtest.Run(t, testCloseManyPending) }

func testCloseManyPending(t *testing.T) {
	const conns, writers = 5000, 50
	leaktest.Check(t)
	w, err := aio.NewWatcherConfig(aio.Config{})
	if err != nil {
		t.Fatalf("NewWatcherConfig = %v", err)
	}
	t.Cleanup(func() { w.Close() })
	col := stCollect(t, w)
	cs, peers := make([]net.Conn, conns), make([]net.Conn, conns)
	big := stPattern(8, 1<<20)
	for i := range cs {
		cs[i], peers[i] = stSocketPair(t)
		if err := w.Read(i, cs[i], make([]byte, 64)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		if i < writers {
			if err := w.Write(i, cs[i], big); err != nil {
				t.Fatalf("Write = %v", err)
			}
			if err := w.Write(i, cs[i], []byte("queued")); err != nil {
				t.Fatalf("Write = %v", err)
			}
		}
	}
	stWaitFor(t, w, "every request pending", func() bool {
		s := w.Stats().Total()
		return s.Conns == conns && s.PendingReads == conns && s.PendingWrites == 2*writers
	})
	col.none(t)

	start := time.Now()
	if err := w.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	took := time.Since(start)
	t.Logf("Close with %d reads and %d writes pending: %v", conns, 2*writers, took.Round(time.Millisecond))
	select {
	case <-col.done:
	case <-time.After(stTimeout):
		t.Fatalf("WaitIO still blocked %v after Close", stTimeout)
	}
	if col.err != aio.ErrWatcherClosed {
		t.Errorf("WaitIO() = %v after Close, want ErrWatcherClosed", col.err)
	}
	col.none(t)
	if res, err := w.WaitIO(); res != nil || err != aio.ErrWatcherClosed {
		t.Errorf("WaitIO() = %v, %v, want nil, ErrWatcherClosed", res, err)
	}
	if err := w.Read(nil, cs[0], nil); err != aio.ErrWatcherClosed {
		t.Errorf("Read after Close = %v, want ErrWatcherClosed", err)
	}
	for i, p := range peers {
		p.SetReadDeadline(time.Now().Add(stTimeout))
		n, err := io.Copy(io.Discard, p)
		if err != nil {
			t.Fatalf("peer %d: read to the end = %d bytes, %v, want end of file", i, n, err)
		}
		if n > 0 && (i >= writers || n > int64(len(big))+6) {
			t.Fatalf("peer %d read %d bytes, want none or at most the writes", i, n)
		}
		p.Close()
	}
}
