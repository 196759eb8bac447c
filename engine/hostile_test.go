package engine_test

// Hostile clients of a broadcast server: one client never reads what a
// broadcaster, writing from its own goroutine and heedless of
// backpressure, sends to everyone. MaxWriteBuffer must cut that client
// off, and memory must stay under the cap meanwhile.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/leaktest"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

const (
	// etCastCap is the MaxWriteBuffer of the broadcast test.
	etCastCap = 1 << 20
	// etCastMsg is the size of a broadcast message.
	etCastMsg = 4 << 10
	// etCastWindow is how far the broadcaster runs ahead of its slowest
	// reader (the non-reader aside): a well-behaved client may lag this
	// much, which stays far under the cap.
	etCastWindow = 256 << 10
	// etCastReaders is the number of clients that read.
	etCastReaders = 3
	// etCastTotal is what the broadcast sends each client: 32 MiB, far
	// over what the memory bound below allows, so that a cap that did not
	// hold would show; 256 MiB with GALE_LONG=1.
	etCastTotal, etCastTotalLong = 32 << 20, 256 << 20
	// etCastHeapSlack is the heap beyond the queues' bytes that the
	// broadcast may take at its peak: garbage between collections (the
	// runtime lets the heap grow to 4 MiB before its first collection, and
	// to twice what was live after one) and the readers' buffers.
	etCastHeapSlack = 8 << 20
)

// etCaster is the broadcast server's list of connections.
type etCaster struct {
	mu    sync.Mutex
	conns map[*engine.Conn]bool
}

func (b *etCaster) add(c *engine.Conn) {
	b.mu.Lock()
	b.conns[c] = true
	b.mu.Unlock()
}

func (b *etCaster) remove(c *engine.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
}

func (b *etCaster) list() []*engine.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*engine.Conn, 0, len(b.conns))
	for c := range b.conns {
		out = append(out, c)
	}
	return out
}

// TestHostileBroadcastNonReader broadcasts to three reading clients and
// one that never reads, writing from a goroutine of its own and ignoring
// backpressure (it only keeps within etCastWindow of the slowest
// reader). It checks that the non-reader's queue never passes
// MaxWriteBuffer, that the Write that would pass it fails with
// ErrWriteBufferFull and closes it with that error, that the engine's
// queued total and the heap stay under the cap (plus the readers' window
// and etCastHeapSlack), and that the readers get every message in order.
func TestHostileBroadcastNonReader(t *testing.T) { backendtest.Run(t, testHostileBroadcastNonReader) }

func testHostileBroadcastNonReader(t *testing.T) {
	total := etCastTotal
	if etLong() {
		total = etCastTotalLong
	}
	h := etNewHandler()
	e := etStart(t, h, engine.Options{MaxWriteBuffer: etCastCap, WriteHighWater: etCastCap / 4})
	a := etListen(t, e, "tcp")
	readers := make([]net.Conn, etCastReaders)
	cast := &etCaster{conns: map[*engine.Conn]bool{}}
	for i := range readers {
		readers[i] = etDial(t, a)
		cast.add(etOpened(t, h))
	}
	mute := etDial(t, a)
	etSmallReadBuffer(mute)
	muteConn := etOpened(t, h)
	cast.add(muteConn)

	base := leaktest.Measure()
	peaks := etSampleMem(t, e)
	var got [etCastReaders]atomic.Int64
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Go(func() {
			if err := etReadCast(r, total, &got[i]); err != nil {
				t.Errorf("reader %d: %v", i, err)
			}
		})
	}
	res, err := etBroadcast(cast, total, muteConn, got[:])
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	heapPeak, queuedPeak := peaks()

	t.Logf("%d MiB broadcast to %d readers; the non-reader was cut after %d bytes accepted, its queue at most %d bytes (cap %d); Stats().Queued peak %d; heap %.1f MiB at rest, peak +%.1f MiB",
		total>>20, etCastReaders, res.muteSent, res.muteMax, etCastCap, queuedPeak, etMiB(base.Heap), etMiB(heapPeak-base.Heap))
	if !errors.Is(res.muteErr, engine.ErrWriteBufferFull) {
		t.Errorf("Write to the non-reader = %v, want ErrWriteBufferFull", res.muteErr)
	}
	if ev := etClosed(t, h); ev.c != muteConn || !errors.Is(ev.err, engine.ErrWriteBufferFull) {
		t.Errorf("OnClose(%p, %v), want the non-reader %p with ErrWriteBufferFull", ev.c, ev.err, muteConn)
	}
	if res.muteMax > etCastCap+etCastMsg {
		t.Errorf("the non-reader's OutboundBuffered reached %d, want at most MaxWriteBuffer %d and one message", res.muteMax, etCastCap)
	}
	if limit := int64(etCastCap + etCastReaders*(etCastWindow+etCastMsg)); queuedPeak > limit {
		t.Errorf("Stats().Queued peaked at %d, want at most %d (the cap and the readers' windows)", queuedPeak, limit)
	}
	if limit := int64(etCastCap + etCastReaders*etCastWindow + etCastHeapSlack); heapPeak-base.Heap > limit {
		t.Errorf("heap grew by %d bytes at its peak, want at most %d (the cap, the readers' windows and %d of slack)",
			heapPeak-base.Heap, limit, etCastHeapSlack)
	}
}

// etCastResult is what the broadcaster saw of the non-reader.
type etCastResult struct {
	muteSent int   // bytes Write accepted for it
	muteMax  int   // the most it had queued after a Write
	muteErr  error // the Write that failed
}

// etBroadcast writes total bytes of numbered messages to every connection
// of cast, waiting only for readers more than etCastWindow behind. A
// connection whose Write fails leaves the broadcast. It fails if a reader
// makes no progress for etWait.
func etBroadcast(cast *etCaster, total int, mute *engine.Conn, got []atomic.Int64) (etCastResult, error) {
	var res etCastResult
	msg := make([]byte, etCastMsg)
	for seq := 0; seq*etCastMsg < total; seq++ {
		for since := time.Now(); etSlowest(got) < int64(seq*etCastMsg-etCastWindow); {
			if time.Since(since) > etWait {
				return res, fmt.Errorf("a reader stalled %d bytes behind message %d", seq*etCastMsg-int(etSlowest(got)), seq)
			}
			time.Sleep(50 * time.Microsecond)
		}
		etStampCast(msg, seq)
		for _, c := range cast.list() {
			_, err := c.Write(msg)
			if err != nil {
				cast.remove(c)
			}
			if c != mute {
				continue
			}
			if err != nil {
				res.muteErr = err
				continue
			}
			res.muteSent += len(msg)
			res.muteMax = max(res.muteMax, c.OutboundBuffered())
		}
	}
	return res, nil
}

func etSlowest(got []atomic.Int64) int64 {
	m := got[0].Load()
	for i := range got[1:] {
		m = min(m, got[i+1].Load())
	}
	return m
}

// etStampCast fills msg with message seq: its number, then bytes derived
// from it.
func etStampCast(msg []byte, seq int) {
	binary.BigEndian.PutUint64(msg, uint64(seq))
	for i := 8; i < len(msg); i++ {
		msg[i] = byte(seq) + byte(i)
	}
}

// etReadCast reads total bytes of broadcast from r, checking that every
// message comes, in order and intact, and counts them in got.
func etReadCast(r net.Conn, total int, got *atomic.Int64) error {
	r.SetReadDeadline(time.Now().Add(10 * etWait))
	buf, want := make([]byte, etCastMsg), make([]byte, etCastMsg)
	for seq := 0; seq*etCastMsg < total; seq++ {
		if err := etReadInto(r, buf); err != nil {
			return fmt.Errorf("message %d: %w", seq, err)
		}
		etStampCast(want, seq)
		if !bytes.Equal(buf, want) {
			return fmt.Errorf("message %d differs: got number %d", seq, binary.BigEndian.Uint64(buf))
		}
		got.Add(etCastMsg)
	}
	return nil
}

// etSampleMem samples the heap and e's queued output every millisecond
// until the returned function is called, which returns their peaks, or
// the test ends.
func etSampleMem(t testing.TB, e *engine.Engine) func() (heap, queued int64) {
	var heap, queued int64
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
			heap = max(heap, leaktest.HeapNow())
			queued = max(queued, e.Stats().Queued)
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() (int64, int64) {
		end()
		return heap, queued
	}
}
