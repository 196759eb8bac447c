package stresstest

import (
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// lorisSize is the size of a slowloris run: the number of connections,
// the interval at which each sends a byte, and how long it goes on.
type lorisSize struct {
	conns              int
	interval, duration time.Duration
}

var (
	// lorisCI keeps to a few seconds per backend.
	lorisCI = lorisSize{conns: 2000, interval: time.Second, duration: 3 * time.Second}
	// lorisLong (GALE_LONG=1) keeps 8,000 connections, 16,000
	// descriptors with the clients' ends, under the limit of 20,000 open
	// files; one byte a minute for three minutes.
	lorisLong = lorisSize{conns: 8000, interval: time.Minute, duration: 3 * time.Minute}
	// lorisWine is the run under Wine, whose server takes time that
	// grows with the sockets open for every socket call: a loopback
	// pair took 3 ms to make with 200 sockets open and 9 ms with 2,000
	// (2026-11-29, this machine), so lorisCI's connections alone would
	// take minutes to open.
	lorisWine = lorisSize{conns: 200, interval: time.Second, duration: 3 * time.Second}
)

const (
	// lorisGood is the number of well-behaved clients, and lorisTrips the
	// round trips each runs per round.
	lorisGood, lorisTrips = 4, 200
	// lorisLine is the size of a well-behaved client's line.
	lorisLine = 64
)

// LorisTarget is the line echo server a slowloris run attacks, and what
// Slowloris needs of it. The server echoes every whole line of every
// connection, and keeps a partial line until its end.
type LorisTarget struct {
	Addr net.Addr
	// Timeout bounds each dial, each round of the well-behaved clients'
	// round trips, each byte a slowloris connection sends, and each wait
	// on the server's counters.
	Timeout time.Duration
	// Holds reports whether the server holds n connections, each waiting
	// for input (aio: its read pending). Called from the goroutine of
	// Slowloris or BenchSlowloris.
	Holds func(n int) bool
	// BytesIn returns the bytes the server has read so far. Called from
	// the goroutine of Slowloris.
	BytesIn func() uint64
	// Held, if set, is called once from the goroutine of Slowloris, with
	// the n connections (slowloris and well-behaved) still open after the
	// trickle has ended, as the heap they hold is measured: the test takes
	// there the counters it checks.
	Held func(n int)
	// ConnMem bounds the heap one slowloris connection may cost, both
	// ends together (they share the process).
	ConnMem int64
}

// Slowloris runs line round trips on 4 well-behaved connections to the
// server while 2,000 connections (8,000 with GALE_LONG=1) trickle a line
// that never ends, a byte per connection per second (per minute), for 3
// seconds (3 minutes).
//
// It fails t unless the well-behaved clients are served throughout, each
// round of 200 round trips within tg.Timeout; the server holds every
// slowloris connection (tg.Holds) and reads every byte sent (tg.BytesIn);
// and a slowloris connection costs at most tg.ConnMem of heap. How fast
// the well-behaved clients are served is logged, not checked: it depends
// on the machine's load, and BenchSlowloris measures it.
//
// Call it from t's goroutine; the server must run on goroutines of its
// own.
func Slowloris(t *testing.T, tg LorisTarget) {
	t.Helper()
	size := lorisCI
	switch {
	case long():
		size = lorisLong
	case backendtest.UnderWine():
		size = lorisWine
	}
	good := DialMany(t, tg.Addr, lorisGood, tg.Timeout)
	var before []float64
	for range 3 {
		before = append(before, faulttest.LineTrips(t, good, lorisTrips, tg.Timeout))
	}

	base := leaktest.Measure()
	loris := DialMany(t, tg.Addr, size.conns, tg.Timeout)
	WaitFor(t, tg.Timeout, "every slowloris connection held", func() bool { return tg.Holds(lorisGood + size.conns) })
	in0 := tg.BytesIn()
	tr := faulttest.StartTrickle(loris, size.interval, tg.Timeout)
	var beside []float64
	for begin := time.Now(); time.Since(begin) < size.duration && !t.Failed(); {
		beside = append(beside, faulttest.LineTrips(t, good, lorisTrips, tg.Timeout))
	}
	if err := tr.End(); err != nil {
		t.Fatal(err)
	}
	held := leaktest.Measure()
	if tg.Held != nil {
		tg.Held(lorisGood + size.conns)
	}
	sent := tr.Sent()
	lorisRead(t, tg, in0, uint64(sent)+uint64(len(beside)*lorisGood*lorisTrips*lorisLine))
	for _, c := range loris {
		c.Close()
	}
	WaitFor(t, tg.Timeout, "the slowloris connections gone", func() bool { return tg.Holds(lorisGood) })
	perConn := (held.Heap - base.Heap) / int64(size.conns)
	t.Logf("%d slowloris conns, a byte each per %v of trickling, for %v (%d bytes); heap %d B per slowloris conn",
		size.conns, size.interval, size.duration, sent, perConn)
	t.Logf("%d well-behaved conns: %.0f round trips/s before the slowloris conns, %.0f beside them (medians of %d and %d rounds)",
		lorisGood, faulttest.Median(before), faulttest.Median(beside), len(before), len(beside))
	if perConn > tg.ConnMem {
		t.Errorf("heap per slowloris conn = %d bytes, want at most %d", perConn, tg.ConnMem)
	}
}

// lorisRead waits, up to tg.Timeout, for the server to have read want
// bytes since in0, and fails t with what it read.
func lorisRead(t *testing.T, tg LorisTarget, in0, want uint64) {
	t.Helper()
	var got uint64
	for end := time.Now().Add(tg.Timeout); ; time.Sleep(time.Millisecond) {
		if got = tg.BytesIn() - in0; got >= want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the server read %d bytes in %v after the trickle ended, want %d (slowloris and well-behaved clients together)", got, tg.Timeout, want)
		}
	}
}

// BenchSlowloris measures what Slowloris leaves out: the line round trips
// of its 4 well-behaved clients, each on its own goroutine, beside its
// 2,000 slowloris connections, idle (open and held, the trickle paused,
// as between their bytes) or trickling. One op is one round trip; the
// throughput kept beside the slowloris is Trickling's ops/s over Idle's,
// on the same backend. It uses tg's Addr, Timeout and Holds.
//
// Call it from b's goroutine; the server must run on goroutines of its
// own.
func BenchSlowloris(b *testing.B, tg LorisTarget, trickling bool) {
	b.Helper()
	size := lorisCI
	good := DialMany(b, tg.Addr, lorisGood, tg.Timeout)
	loris := DialMany(b, tg.Addr, size.conns, tg.Timeout)
	WaitFor(b, tg.Timeout, "every slowloris connection held", func() bool { return tg.Holds(lorisGood + size.conns) })
	tr := faulttest.StartTrickle(loris, size.interval, tg.Timeout)
	tr.Paused.Store(!trickling)
	faulttest.BenchLineTrips(b, good, tg.Timeout)
	b.StopTimer()
	if err := tr.End(); err != nil {
		b.Fatal(err)
	}
}
