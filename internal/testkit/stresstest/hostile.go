package stresstest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

const (
	// HostileCap is the most output the server may hold for one client:
	// past it, the server must let the client go (aio's publisher frees
	// it; engine's MaxWriteBuffer closes it).
	HostileCap = 1 << 20
	// HostileMsg is the size of a message.
	HostileMsg = 4 << 10
	// HostileWindow is how far the server runs ahead of its slowest
	// reader (the non-reader aside): a reader may lag this much, which
	// stays far under the cap.
	HostileWindow = 256 << 10
	// HostileReaders is the number of clients that read.
	HostileReaders = 3
	// hostileTotal is what the server sends each client: 32 MiB, far
	// over what the memory bound allows, so that a cap that did not hold
	// would show; 256 MiB with GALE_LONG=1.
	hostileTotal, hostileTotalLong = 32 << 20, 256 << 20
	// hostileHeapSlack is the heap beyond the cap and the readers'
	// windows that the run may take at its peak: garbage between
	// collections (the runtime lets the heap grow to 4 MiB before its
	// first collection, and to twice what was live after one) and the
	// readers' buffers.
	hostileHeapSlack = 8 << 20
)

// HostileTarget is a server that pushes messages to its clients, and
// what Hostile needs of it. All its functions but Gauges are called from
// the goroutine of Hostile.
type HostileTarget struct {
	Addr net.Addr
	// Timeout bounds each dial and each wait for a reader that makes no
	// progress; a reader's whole run is bounded by ten times it.
	Timeout time.Duration
	// Opened takes the server's end of client i, just dialed, before the
	// next dial: clients 0 to HostileReaders-1 read, client
	// HostileReaders never does.
	Opened func(i int)
	// Send sends message seq (HostileMsg bytes that Stamp fills) to every
	// client the server still serves, letting go of any that would hold
	// more than HostileCap. An error ends the run and fails it.
	Send func(seq int) error
	// Backlogged, if set, reports whether the server must hold the next
	// message back although every reader is within HostileWindow of it
	// (aio: a reader's pending writes at the cap, their completions not
	// consumed yet).
	Backlogged func() bool
	// State, if set, describes the server's queues, for the message of a
	// reader that stalled.
	State func() string
	// Gauges are sampled with the heap every millisecond while the
	// messages go out, from a goroutine of their own (leaktest.Peaks);
	// HostileResult.Peaks has their peaks.
	Gauges []func() int64
}

// HostileResult is what a hostile run saw.
type HostileResult struct {
	Total int     // the bytes sent to each reader
	Peaks []int64 // the peaks of HostileTarget.Gauges, in order
}

// Hostile dials HostileReaders clients that read every message, and one
// that never reads, with a small receive buffer, so that the kernel
// absorbs little of what it is sent. Then it has the server send every
// client 32 MiB of numbered messages (256 MiB with GALE_LONG=1),
// message after message, keeping within HostileWindow of the slowest
// reader.
//
// It fails t unless the readers get every message in order and intact,
// none stalling for tg.Timeout, and the heap grows by at most HostileCap,
// the readers' windows and 8 MiB of slack at its peak. What the server
// does with the non-reader is for the caller to check, after.
//
// Call it from t's goroutine; the server must run on goroutines of its
// own.
func Hostile(t *testing.T, tg HostileTarget) HostileResult {
	t.Helper()
	total := hostileTotal
	if long() {
		total = hostileTotalLong
	}
	clients := make([]net.Conn, HostileReaders+1)
	for i := range clients {
		c, err := net.DialTimeout(tg.Addr.Network(), tg.Addr.String(), tg.Timeout)
		if err != nil {
			t.Fatalf("Dial = %v, want nil", err)
		}
		t.Cleanup(func() { c.Close() })
		if i == HostileReaders {
			smallReadBuffer(c)
		}
		clients[i] = c
		tg.Opened(i)
	}

	base := leaktest.Measure()
	peaks := leaktest.Peaks(t, append([]func() int64{leaktest.HeapNow}, tg.Gauges...)...)
	var got [HostileReaders]atomic.Int64
	var wg sync.WaitGroup
	for i := range HostileReaders {
		wg.Go(func() {
			if err := readPushed(clients[i], total, &got[i], 10*tg.Timeout); err != nil {
				t.Errorf("reader %d: %v", i, err)
			}
		})
	}
	err := push(tg, total, got[:])
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	p := peaks()
	heapPeak := p[0] - base.Heap
	t.Logf("%d MiB sent to %d readers beside a non-reader; heap %.1f MiB at rest, peak +%.1f MiB",
		total>>20, HostileReaders, mib(base.Heap), mib(heapPeak))
	if limit := int64(HostileCap + HostileReaders*HostileWindow + hostileHeapSlack); heapPeak > limit {
		t.Errorf("heap grew by %d bytes at its peak, want at most %d (the cap, the readers' windows and %d of slack)",
			heapPeak, limit, hostileHeapSlack)
	}
	return HostileResult{Total: total, Peaks: p[1:]}
}

// smallReadBuffer shrinks c's receive buffer, so that the kernel absorbs
// little of what a peer that never reads is sent.
func smallReadBuffer(c net.Conn) {
	if rb, ok := c.(interface{ SetReadBuffer(int) error }); ok {
		rb.SetReadBuffer(4 << 10)
	}
}

// push has tg send total bytes of messages, waiting before each only for
// readers more than HostileWindow behind it (got counts what each reader
// has read), and for tg.Backlogged. It fails if the wait passes
// tg.Timeout.
func push(tg HostileTarget, total int, got []atomic.Int64) error {
	for seq := 0; seq*HostileMsg < total; seq++ {
		for since := time.Now(); slowest(got) < int64(seq*HostileMsg-HostileWindow) || (tg.Backlogged != nil && tg.Backlogged()); {
			if time.Since(since) > tg.Timeout {
				state := ""
				if tg.State != nil {
					state = " (" + tg.State() + ")"
				}
				return fmt.Errorf("a reader stalled %d bytes behind message %d%s", seq*HostileMsg-int(slowest(got)), seq, state)
			}
			time.Sleep(50 * time.Microsecond)
		}
		if err := tg.Send(seq); err != nil {
			return err
		}
	}
	return nil
}

// slowest returns the least of got.
func slowest(got []atomic.Int64) int64 {
	m := got[0].Load()
	for i := range got[1:] {
		m = min(m, got[i+1].Load())
	}
	return m
}

// Stamp fills msg with message seq: its number, then bytes derived from
// it. It is safe from any goroutine.
func Stamp(msg []byte, seq int) {
	binary.BigEndian.PutUint64(msg, uint64(seq))
	for i := 8; i < len(msg); i++ {
		msg[i] = byte(seq) + byte(i)
	}
}

// readPushed reads total bytes of messages from r, within timeout,
// checking that every message comes, in order and intact, and counts
// them in got.
func readPushed(r net.Conn, total int, got *atomic.Int64, timeout time.Duration) error {
	r.SetReadDeadline(time.Now().Add(timeout))
	buf, want := make([]byte, HostileMsg), make([]byte, HostileMsg)
	for seq := 0; seq*HostileMsg < total; seq++ {
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("message %d: %w", seq, err)
		}
		Stamp(want, seq)
		if !bytes.Equal(buf, want) {
			return fmt.Errorf("message %d differs: got number %d", seq, binary.BigEndian.Uint64(buf))
		}
		got.Add(HostileMsg)
	}
	return nil
}
