//go:build unix

package aio_test

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
)

// TestLoopFault makes one loop's backend fail while every connection has
// requests pending. The watcher must not go on as if nothing happened:
// every pending request completes, with an error carrying the failure,
// WaitIO then returns ErrWatcherClosed, Err reports the failure, and
// every descriptor is closed (the peers read end of file). The loop used
// to end silently: its requests never completed and its descriptors
// stayed open.
func TestLoopFault(t *testing.T) { backendtest.Run(t, testLoopFault) }

func testLoopFault(t *testing.T) {
	var fail atomic.Bool
	w, err := aio.NewWatcherBackend(aio.Config{Loops: 2}, faulttest.FailFirst(&fail))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	col := stCollect(t, w)
	const conns = 4
	var cs, peers [conns]net.Conn
	for i := range conns {
		cs[i], peers[i] = stSocketPair(t)
		for range 2 { // one in flight, one queued behind it
			if err := w.Read(i, cs[i], make([]byte, 16)); err != nil {
				t.Fatal(err)
			}
		}
	}
	stWaitFor(t, w, "every read pending", func() bool { return w.Stats().Total().PendingReads == 2*conns })
	fail.Store(true)
	for i := range conns { // wake the loops: the failing one fails
		w.Write(i, cs[i], []byte("x"))
	}
	// Writes submitted after the failure are refused (ErrWatcherClosed):
	// count the reads, all of which were pending.
	select {
	case <-col.done:
	case <-time.After(stTimeout):
		t.Fatal("WaitIO did not report the watcher closed after a loop failed")
	}
	faulted, reads := 0, 0
	for len(col.ch) > 0 {
		r := <-col.ch
		if r.Operation != aio.OpRead {
			continue
		}
		reads++
		if r.Error == nil {
			t.Errorf("a read pending when its loop failed completed without an error (ctx %v)", r.Context)
		}
		if errors.Is(r.Error, faulttest.ErrBackend) {
			faulted++
		}
	}
	if reads != 2*conns {
		t.Errorf("%d of the %d pending reads completed", reads, 2*conns)
	}
	if faulted == 0 {
		t.Error("no request completed with the backend's failure")
	}
	if !errors.Is(col.err, aio.ErrWatcherClosed) {
		t.Errorf("WaitIO after the failure = %v, want ErrWatcherClosed", col.err)
	}
	if err := w.Err(); !errors.Is(err, faulttest.ErrBackend) {
		t.Errorf("Err() = %v, want the backend's failure", err)
	}
	for _, p := range peers {
		p.SetReadDeadline(time.Now().Add(stTimeout))
		var b [8]byte
		for {
			if _, err := p.Read(b[:]); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Errorf("peer read %v, want end of file", err)
				}
				break
			}
		}
	}
}
