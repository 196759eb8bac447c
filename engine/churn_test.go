package engine_test

// Churn: short connections, one after another from several dialers,
// against one engine. Each dials, sends a message, reads its echo and
// hangs up. Afterwards nothing may be left of them: no descriptor, no
// goroutine, no heap, no connection in the engine's counters.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

const (
	// etChurnCycles is the number of cycles per backend: 5,000
	// by default, 100,000 with GALE_LONG=1.
	etChurnCycles, etChurnCyclesLong = 5000, 100_000
	// etChurnDialers is how many goroutines dial at once.
	etChurnDialers = 8
	// etChurnMaxMsg is the largest message of a cycle.
	etChurnMaxMsg = 1024
	// etChurnHeapSlack is how much more heap than before the cycles is
	// not a leak: collections leave a little floating garbage, and loops
	// keep buffers they have grown. Over 100,000 cycles it catches a leak
	// of 11 bytes a cycle; over 5,000, of 210 bytes.
	etChurnHeapSlack = 1 << 20
)

// TestChurn runs connect–exchange–disconnect cycles against one echo
// engine, checks every echo, and then that the process's descriptors,
// goroutines and heap are back to where they were before the cycles
// (tolerances: no descriptor, leaktest.GoroutineSlack goroutines,
// etChurnHeapSlack bytes) and that the engine holds no connection, queue,
// pause or timer.
func TestChurn(t *testing.T) { backendtest.Run(t, testChurn) }

func testChurn(t *testing.T) {
	cycles := etChurnCycles
	if etLong() {
		cycles = etChurnCyclesLong
	}
	h := &etCountServer{}
	e := etStartCount(t, h, engine.Options{})
	a := etListen(t, e, "tcp")

	// A warm-up, so that what the engine and the runtime allocate once
	// (loop buffers, slot table pages, netpoll) counts in the baseline.
	if _, err := etChurn(a, 200, etChurnDialers); err != nil {
		t.Fatal(err)
	}
	etWaitFor(t, "no connection after the warm-up", func() bool { return e.Stats().Total().Conns == 0 })
	before, in0 := leaktest.Measure(), e.Stats().Total()
	start := time.Now()
	sent, err := etChurn(a, cycles, etChurnDialers)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	etWaitFor(t, "every connection closed", func() bool {
		return e.Stats().Total().Conns == 0 && h.closes.Load() == h.opens.Load()
	})
	after, ok := leaktest.Settle(before, etChurnHeapSlack)
	t.Logf("%d cycles from %d dialers in %v (%.0f/s); fds %d -> %d, goroutines %d -> %d, heap %.2f -> %.2f MiB",
		cycles, etChurnDialers, elapsed.Round(time.Millisecond), float64(cycles)/elapsed.Seconds(),
		before.FDs, after.FDs, before.Goroutines, after.Goroutines, etMiB(before.Heap), etMiB(after.Heap))
	if !ok {
		t.Errorf("after %d cycles: fds %d -> %d (want no more), goroutines %d -> %d (want at most %d more), heap %d -> %d bytes (want at most %d more)",
			cycles, before.FDs, after.FDs, before.Goroutines, after.Goroutines, leaktest.GoroutineSlack,
			before.Heap, after.Heap, etChurnHeapSlack)
	}
	etCheckChurnStats(t, e, h, in0, sent, cycles)
}

// etCheckChurnStats checks the engine's counters after the cycles: no
// connection, queue, pause or timer left, every byte sent read and
// echoed, every connection closed by its peer.
func etCheckChurnStats(t *testing.T, e *engine.Engine, h *etCountServer, in0 engine.LoopStats, sent int64, cycles int) {
	t.Helper()
	s := e.Stats()
	tot := s.Total()
	if tot.Conns != 0 || e.Conns() != 0 || s.Queued != 0 || tot.Paused != 0 || tot.Timers != 0 {
		t.Errorf("Stats after the cycles: Conns %d, Engine.Conns %d, Queued %d, Paused %d, Timers %d; want all 0",
			tot.Conns, e.Conns(), s.Queued, tot.Paused, tot.Timers)
	}
	if in, out := tot.BytesIn-in0.BytesIn, tot.BytesOut-in0.BytesOut; in != uint64(sent) || out != uint64(sent) {
		t.Errorf("engine read %d and wrote %d bytes in %d cycles, want %d each", in, out, cycles, sent)
	}
	if p := h.badClose.Load(); p != nil {
		t.Errorf("OnClose(err = %v), want io.EOF for every connection", *p)
	}
	if o, c := h.opens.Load(), h.closes.Load(); o != c {
		t.Errorf("%d OnOpen, %d OnClose, want as many", o, c)
	}
}

// etChurn runs cycles connect–exchange–disconnect cycles against a from
// dialers goroutines. It returns the bytes sent (and echoed), or the
// first failure.
func etChurn(a net.Addr, cycles, dialers int) (int64, error) {
	var next, sent atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range dialers {
		wg.Go(func() {
			msg, buf := make([]byte, etChurnMaxMsg), make([]byte, etChurnMaxMsg)
			for first.Load() == nil {
				i := next.Add(1) - 1
				if i >= int64(cycles) {
					return
				}
				n, err := etChurnCycle(a, i, msg, buf)
				if err != nil {
					first.CompareAndSwap(nil, &err)
					return
				}
				sent.Add(int64(n))
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		return sent.Load(), *p
	}
	return sent.Load(), nil
}

// etChurnCycle dials a, sends a message of its own (1 to etChurnMaxMsg
// bytes, depending on i), checks the echo and hangs up.
func etChurnCycle(a net.Addr, i int64, msg, buf []byte) (int, error) {
	c, err := net.DialTimeout(a.Network(), a.String(), etWait)
	if err != nil {
		return 0, fmt.Errorf("cycle %d: %w", i, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(etWait))
	m := msg[:1+int(i*7919)%len(msg)]
	for k := range m {
		m[k] = byte(i) ^ byte(k*31)
	}
	if _, err := c.Write(m); err != nil {
		return 0, fmt.Errorf("cycle %d: Write = %w", i, err)
	}
	got := buf[:len(m)]
	if _, err := io.ReadFull(c, got); err != nil {
		return 0, fmt.Errorf("cycle %d: reading the echo of %d bytes: %w", i, len(m), err)
	}
	if !bytes.Equal(got, m) {
		return 0, fmt.Errorf("cycle %d: the echo of %d bytes differs from them", i, len(m))
	}
	return len(m), nil
}

// etMiB converts bytes to MiB, for logs.
func etMiB(n int64) float64 { return float64(n) / (1 << 20) }
