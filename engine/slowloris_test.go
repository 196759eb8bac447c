package engine_test

// Slowloris: thousands of connections that each send a byte of an
// unending line now and then, holding the server's connections and
// partial input, while a few well-behaved clients run line round trips.
// The well-behaved clients must keep their throughput.

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/leaktest"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/faulttest"
)

// etLoris is the size of a slowloris run: the number of connections, the
// interval at which each sends a byte, how long it goes on, and how often
// the well-behaved clients' throughput is measured meanwhile.
type etLoris struct {
	conns              int
	interval, duration time.Duration
	every              time.Duration
}

var (
	// etLorisCI keeps to a few seconds per backend.
	etLorisCI = etLoris{conns: 2000, interval: time.Second, duration: 3 * time.Second, every: 50 * time.Millisecond}
	// etLorisLong (GALE_LONG=1) keeps 8,000 connections, 16,000
	// descriptors with the clients' ends, under the limit of 20,000 open
	// files; one byte a minute for three minutes.
	etLorisLong = etLoris{conns: 8000, interval: time.Minute, duration: 3 * time.Minute, every: 15 * time.Second}
)

const (
	// etLorisGood is the number of well-behaved clients, and
	// etLorisTrips the round trips each runs per measurement.
	etLorisGood, etLorisTrips = 4, 1000
	// etLorisMinRatio is the share of their throughput alone that the
	// well-behaved clients must keep beside the slowloris (median of the
	// pairs' ratios).
	etLorisMinRatio = 0.8
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
// connection per interval. It checks that the well-behaved clients keep
// at least etLorisMinRatio of their throughput; that the server keeps
// every slowloris connection and receives every byte; that nothing is
// queued for output; and that a slowloris connection costs at most
// etLorisConnMem of heap. GALE_LONG=1 runs etLorisLong.
//
// The throughput is measured in pairs, back to back: with the trickle
// paused (the slowloris connections idle, as between their bytes) and
// running. The machine's load, which drifts, then weighs on both alike;
// the ratio is the median of the pairs', and the pairs go on for longer
// when it is short. The throughput before any slowloris connection is
// logged.
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
	for range 5 {
		before = append(before, faulttest.LineTrips(t, good, etLorisTrips, etWait))
	}

	base := leaktest.Measure()
	loris := etDialMany(t, a, cfg.conns)
	etWaitFor(t, "every slowloris connection open", func() bool { return e.Stats().Total().Conns == etLorisGood+cfg.conns })
	in0 := e.Stats().Total().BytesIn
	tr := faulttest.StartTrickle(loris, cfg.interval, etWait)
	var idle, beside []float64
	begin := time.Now()
	for time.Since(begin) < cfg.duration || etLorisShort(beside, idle) && time.Since(begin) < cfg.duration+min(cfg.duration, time.Minute) {
		time.Sleep(cfg.every)
		tr.Paused.Store(true)
		idle = append(idle, faulttest.LineTrips(t, good, etLorisTrips, etWait))
		tr.Paused.Store(false)
		beside = append(beside, faulttest.LineTrips(t, good, etLorisTrips, etWait))
	}
	if err := tr.End(); err != nil {
		t.Fatal(err)
	}
	cfg.duration = time.Since(begin).Round(100 * time.Millisecond) // what it ran for, for the log
	held := leaktest.Measure()
	s := e.Stats()
	sent := tr.Sent()
	etWaitFor(t, "every slowloris byte received", func() bool {
		return e.Stats().Total().BytesIn-in0 >= uint64(sent)+uint64(2*len(beside)*etLorisGood*etLorisTrips*64)
	})
	for _, c := range loris {
		c.Close()
	}
	etWaitFor(t, "the slowloris connections closed", func() bool { return e.Stats().Total().Conns == etLorisGood })
	t.Logf("%d well-behaved conns: %.0f round trips/s before the slowloris conns, %.0f with them idle, %.0f with them trickling",
		etLorisGood, faulttest.Median(before), faulttest.Median(idle), faulttest.Median(beside))
	etCheckLoris(t, cfg, faulttest.MedianRatio(beside, idle), len(beside), held.Heap-base.Heap, sent, s, h)
}

// etLorisShort reports whether the throughput beside the slowloris is
// under etLorisMinRatio of it alone so far.
func etLorisShort(beside, alone []float64) bool {
	return len(beside) == 0 || faulttest.MedianRatio(beside, alone) < etLorisMinRatio
}

// etCheckLoris checks and logs the slowloris figures.
func etCheckLoris(t *testing.T, cfg etLoris, ratio float64, pairs int, heap, sent int64, s engine.Stats, h *etCountServer) {
	t.Helper()
	perConn := heap / int64(cfg.conns)
	t.Logf("%d slowloris conns, a byte each per %v of trickling, for %v (%d bytes): throughput ratio %.2f (median of %d pairs); heap %d B per slowloris conn",
		cfg.conns, cfg.interval, cfg.duration, sent, ratio, pairs, perConn)
	if ratio < etLorisMinRatio {
		t.Errorf("well-behaved throughput beside the slowloris = %.2f of it alone, want at least %.2f", ratio, etLorisMinRatio)
	}
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

// etDialMany opens n connections to a, 16 dials at a time, closed at
// cleanup.
func etDialMany(t *testing.T, a net.Addr, n int) []net.Conn {
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
