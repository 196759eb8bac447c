package engine_test

// Slowloris: thousands of connections that each send a byte of an
// unending line now and then, holding the server's connections and
// partial input, while a few well-behaved clients run line round trips.
// The test checks what the server holds and that the well-behaved
// clients are served; BenchmarkSlowloris measures their throughput.

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/leaktest"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
)

// etLoris is the size of a slowloris run: the number of connections, the
// interval at which each sends a byte, and how long it goes on.
type etLoris struct {
	conns              int
	interval, duration time.Duration
}

var (
	// etLorisCI keeps to a few seconds per backend.
	etLorisCI = etLoris{conns: 2000, interval: time.Second, duration: 3 * time.Second}
	// etLorisLong (GALE_LONG=1) keeps 8,000 connections, 16,000
	// descriptors with the clients' ends, under the limit of 20,000 open
	// files; one byte a minute for three minutes.
	etLorisLong = etLoris{conns: 8000, interval: time.Minute, duration: 3 * time.Minute}
)

const (
	// etLorisGood is the number of well-behaved clients, and
	// etLorisTrips the round trips each runs per round.
	etLorisGood, etLorisTrips = 4, 200
	// etLorisConnMem bounds the heap one slowloris connection may cost,
	// both ends together (they share the process): the engine's Conn with
	// its few bytes of partial line, and the client's net.Conn.
	etLorisConnMem = 8 << 10
)

// etLineEcho echoes every whole line; a partial line waits in the Inbound
// for its end.
func etLineEcho(c *engine.Conn, in *engine.Inbound) engine.Action {
	for {
		line, err := in.ReadUntil('\n')
		if err != nil {
			return engine.None
		}
		c.Write(line)
	}
}

// TestSlowloris serves line echo to a few well-behaved clients while
// thousands of connections trickle a line that never ends, one byte per
// connection per interval. It checks that the well-behaved clients are
// served throughout, each round of etLorisTrips round trips within
// etWait; that the server keeps every slowloris connection and receives
// every byte; that nothing is queued for output; and that a slowloris
// connection costs at most etLorisConnMem of heap. GALE_LONG=1 runs
// etLorisLong.
//
// How fast the well-behaved clients are served beside the slowloris is
// a measurement, not a behaviour: it depends on the machine's load, and
// BenchmarkSlowloris measures it. The test logs the round trips per
// second it saw.
func TestSlowloris(t *testing.T) { backendtest.Run(t, testSlowloris) }

func testSlowloris(t *testing.T) {
	cfg := etLorisCI
	if etLong() {
		cfg = etLorisLong
	}
	h := &etCountServer{data: etLineEcho}
	e := etStartCount(t, h, engine.Options{})
	a := etListen(t, e, "tcp")
	good := make([]net.Conn, etLorisGood)
	for i := range good {
		good[i] = etDial(t, a)
	}
	var before []float64
	for range 3 {
		before = append(before, faulttest.LineTrips(t, good, etLorisTrips, etWait))
	}

	base := leaktest.Measure()
	loris := etDialMany(t, a, cfg.conns)
	etWaitFor(t, "every slowloris connection open", func() bool { return e.Stats().Total().Conns == etLorisGood+cfg.conns })
	in0 := e.Stats().Total().BytesIn
	tr := faulttest.StartTrickle(loris, cfg.interval, etWait)
	var beside []float64
	for begin := time.Now(); time.Since(begin) < cfg.duration && !t.Failed(); {
		beside = append(beside, faulttest.LineTrips(t, good, etLorisTrips, etWait))
	}
	if err := tr.End(); err != nil {
		t.Fatal(err)
	}
	held := leaktest.Measure()
	s := e.Stats()
	sent := tr.Sent()
	etLorisReceived(t, e, in0, uint64(sent)+uint64(len(beside)*etLorisGood*etLorisTrips*64))
	for _, c := range loris {
		c.Close()
	}
	etWaitFor(t, "the slowloris connections closed", func() bool { return e.Stats().Total().Conns == etLorisGood })
	perConn := (held.Heap - base.Heap) / int64(cfg.conns)
	t.Logf("%d slowloris conns, a byte each per %v of trickling, for %v (%d bytes); heap %d B per slowloris conn",
		cfg.conns, cfg.interval, cfg.duration, sent, perConn)
	t.Logf("%d well-behaved conns: %.0f round trips/s before the slowloris conns, %.0f beside them (medians of %d and %d rounds)",
		etLorisGood, faulttest.Median(before), faulttest.Median(beside), len(before), len(beside))
	if perConn > etLorisConnMem {
		t.Errorf("heap per slowloris conn = %d bytes, want at most %d", perConn, etLorisConnMem)
	}
	if s.Queued != 0 {
		t.Errorf("Stats().Queued = %d with the slowloris conns open, want 0: nothing is due to them", s.Queued)
	}
	if p := h.badClose.Load(); p != nil {
		t.Errorf("OnClose(err = %v), want io.EOF: the server must keep slow conns", *p)
	}
}

// etLorisReceived waits, up to etWait, for e to have received want bytes
// since in0, and fails with what it received.
func etLorisReceived(t *testing.T, e *engine.Engine, in0, want uint64) {
	t.Helper()
	var got uint64
	for end := time.Now().Add(etWait); ; time.Sleep(time.Millisecond) {
		if got = e.Stats().Total().BytesIn - in0; got >= want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the engine received %d bytes in %v after the trickle ended, want %d (slowloris and well-behaved clients together)", got, etWait, want)
		}
	}
}

// BenchmarkSlowloris measures what TestSlowloris leaves out: the line
// round trips of etLorisGood well-behaved clients, each on its own
// goroutine, beside etLorisCI's slowloris connections, idle (open, the
// trickle paused, as between their bytes) and trickling. One op is one
// round trip; the throughput kept beside the slowloris is Trickling's
// ops/s over Idle's, on the same backend:
//
//	go test -run '^$' -bench Slowloris -count 6 ./engine/ | tee loris.txt
//	benchstat loris.txt
func BenchmarkSlowloris(b *testing.B) {
	for _, state := range []string{"Idle", "Trickling"} {
		b.Run(state, func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) { benchSlowloris(b, state == "Trickling") })
		})
	}
}

func benchSlowloris(b *testing.B, trickling bool) {
	cfg := etLorisCI
	e := etStartCount(b, &etCountServer{data: etLineEcho}, engine.Options{})
	a := etListen(b, e, "tcp")
	good := make([]net.Conn, etLorisGood)
	for i := range good {
		good[i] = etDial(b, a)
	}
	loris := etDialMany(b, a, cfg.conns)
	etWaitFor(b, "every slowloris connection open", func() bool { return e.Stats().Total().Conns == etLorisGood+cfg.conns })
	tr := faulttest.StartTrickle(loris, cfg.interval, etWait)
	tr.Paused.Store(!trickling)
	faulttest.BenchLineTrips(b, good, etWait)
	b.StopTimer()
	if err := tr.End(); err != nil {
		b.Fatal(err)
	}
}

// etDialMany opens n connections to a, 16 dials at a time, closed at
// cleanup.
func etDialMany(t testing.TB, a net.Addr, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && first.Load() == nil; i = int(next.Add(1) - 1) {
				c, err := net.DialTimeout(a.Network(), a.String(), etWait)
				if err != nil {
					err = fmt.Errorf("dial %d of %d: %w", i, n, err)
					first.CompareAndSwap(nil, &err)
					return
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		t.Fatal(*p)
	}
	return conns
}
