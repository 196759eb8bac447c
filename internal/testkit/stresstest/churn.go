package stresstest

import (
	"bytes"
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
	// churnCycles is the number of cycles of a run after its warm-up:
	// 5,000 by default, 100,000 with GALE_LONG=1.
	churnCycles, churnCyclesLong = 5000, 100_000
	// churnWarm is the number of cycles of the warm-up.
	churnWarm = 200
	// churnDialers is how many goroutines dial at once.
	churnDialers = 8
	// churnMaxMsg is the largest message of a cycle.
	churnMaxMsg = 1024
	// churnHeapSlack is how much more heap than before the cycles is not
	// a leak: collections leave a little floating garbage, and servers
	// keep buffers they have grown. Over 100,000 cycles it catches a leak
	// of 11 bytes a cycle; over 5,000, of 210 bytes.
	churnHeapSlack = 1 << 20
)

// ChurnConfig is what Churn needs of the server under test, an echo
// server.
type ChurnConfig struct {
	// Released reports whether the server holds nothing of the
	// connections that have hung up: no connection, request or callback
	// pending in its counters. Churn polls it from its own goroutine
	// after the warm-up and after the cycles.
	Released func() bool
	// Timeout bounds each cycle (the dial, the message and its echo) and
	// each wait for Released.
	Timeout time.Duration
}

// ChurnResult is what a churn run sent.
type ChurnResult struct {
	Cycles int   // the cycles run, the warm-up's included
	Sent   int64 // the bytes they sent, each echoed back
}

// Churn runs connect–exchange–disconnect cycles against the echo server
// at addr from 8 dialers at once: each cycle dials, sends a message of 1
// to 1,024 bytes, checks its echo and hangs up. A warm-up of 200 cycles
// comes first, so that what the server and the runtime allocate once
// counts in the baseline; then 5,000 cycles (100,000 with GALE_LONG=1).
//
// A cycle that fails fails t at once (t.Fatal). Once the server has
// released the cycles' connections (cfg.Released), Churn checks that the
// process's descriptors, goroutines and heap are back to where they were
// before the cycles: no descriptor more, at most leaktest.GoroutineSlack
// goroutines and 1 MiB of heap more. It returns what the run sent, for
// the caller to check against the server's own counters, taken before
// Churn is called.
//
// Call it from t's goroutine; the server must run on goroutines of its
// own.
func Churn(t *testing.T, addr net.Addr, cfg ChurnConfig) ChurnResult {
	t.Helper()
	cycles := churnCycles
	if long() {
		cycles = churnCyclesLong
	}
	warm, err := churn(addr, churnWarm, cfg.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	WaitFor(t, cfg.Timeout, "every connection released after the warm-up", cfg.Released)
	before := leaktest.Measure()
	start := time.Now()
	sent, err := churn(addr, cycles, cfg.Timeout)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	WaitFor(t, cfg.Timeout, "every connection released", cfg.Released)
	after, ok := leaktest.Settle(before, churnHeapSlack)
	t.Logf("%d cycles from %d dialers in %v (%.0f/s); fds %d -> %d, goroutines %d -> %d, heap %.2f -> %.2f MiB",
		cycles, churnDialers, elapsed.Round(time.Millisecond), float64(cycles)/elapsed.Seconds(),
		before.FDs, after.FDs, before.Goroutines, after.Goroutines, mib(before.Heap), mib(after.Heap))
	if !ok {
		t.Errorf("after %d cycles: fds %d -> %d (want no more), goroutines %d -> %d (want at most %d more), heap %d -> %d bytes (want at most %d more)",
			cycles, before.FDs, after.FDs, before.Goroutines, after.Goroutines, leaktest.GoroutineSlack,
			before.Heap, after.Heap, churnHeapSlack)
	}
	return ChurnResult{Cycles: churnWarm + cycles, Sent: warm + sent}
}

// churn runs cycles connect–exchange–disconnect cycles against addr from
// churnDialers goroutines. It returns the bytes sent (and echoed), or the
// first failure.
func churn(addr net.Addr, cycles int, timeout time.Duration) (int64, error) {
	var next, sent atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range churnDialers {
		wg.Go(func() {
			msg, buf := make([]byte, churnMaxMsg), make([]byte, churnMaxMsg)
			for first.Load() == nil {
				i := next.Add(1) - 1
				if i >= int64(cycles) {
					return
				}
				n, err := churnCycle(addr, i, msg, buf, timeout)
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

// churnCycle dials addr, sends a message of its own (1 to churnMaxMsg
// bytes, depending on i), checks the echo and hangs up, all within
// timeout.
func churnCycle(addr net.Addr, i int64, msg, buf []byte, timeout time.Duration) (int, error) {
	c, err := net.DialTimeout(addr.Network(), addr.String(), timeout)
	if err != nil {
		return 0, fmt.Errorf("cycle %d: %w", i, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
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
