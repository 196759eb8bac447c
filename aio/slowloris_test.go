package aio_test

// Slowloris: thousands of connections that each send a byte now and then,
// each holding a pending read on the watcher, while a few well-behaved
// clients run echo round trips. The well-behaved clients must be served,
// and a pending nil-buffer read must hold no swap memory;
// BenchmarkSlowloris measures the well-behaved clients' throughput.

import (
	"bytes"
	"fmt"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
)

// stLoris is the size of a slowloris run: the number of connections, the
// interval at which each sends a byte, and how long it goes on.
type stLoris struct {
	conns              int
	interval, duration time.Duration
}

var (
	// stLorisCI keeps to a few seconds per backend.
	stLorisCI = stLoris{conns: 2000, interval: time.Second, duration: 3 * time.Second}
	// stLorisLong (GALE_LONG=1) keeps 8,000 connections, 16,000
	// descriptors with the clients' ends, under the limit of 20,000 open
	// files; one byte a minute for three minutes.
	stLorisLong = stLoris{conns: 8000, interval: time.Minute, duration: 3 * time.Minute}
)

const (
	// stLorisGood is the number of well-behaved clients, and
	// stLorisTrips the round trips each runs per round.
	stLorisGood, stLorisTrips = 4, 200
	// stLorisConnMem bounds the heap one slowloris connection may cost,
	// both ends together (they share the process): the watcher's
	// connection and its pending read (into the swap buffer: no memory of
	// its own), the server's few bytes of partial line, and the client's
	// net.Conn.
	stLorisConnMem = 4 << 10
)

// stLineServer accepts on a loopback listener and echoes every whole line
// of every connection through a watcher, reading into the swap buffer; a
// partial line waits, copied aside, for its end. A connection is freed at
// end of file.
type stLineServer struct {
	w       *aio.Watcher
	ln      net.Listener
	partial map[net.Conn][]byte // the WaitIO goroutine's
	errs    stErrs
}

func stStartLines(t testing.TB, w *aio.Watcher) *stLineServer {
	s := &stLineServer{w: w, partial: map[net.Conn][]byte{}}
	s.ln = stServe(t, w, &s.errs, func(c net.Conn) error { return w.Read(nil, c, nil) }, s.serve)
	return s
}

func (s *stLineServer) serve(r aio.OpResult) error {
	switch {
	case r.Operation == aio.OpRead && r.Error == nil:
		data := append(s.partial[r.Conn], r.Buffer[:r.Size]...) // out of the swap buffer
		i := bytes.LastIndexByte(data, '\n')
		if i < 0 {
			s.partial[r.Conn] = data
			return s.w.Read(nil, r.Conn, nil)
		}
		s.partial[r.Conn] = bytes.Clone(data[i+1:])
		return s.w.Write(nil, r.Conn, data[:i+1])
	case r.Operation == aio.OpWrite && r.Error == nil:
		return s.w.Read(nil, r.Conn, nil)
	case r.Error != io.EOF:
		s.errs.add(fmt.Errorf("%v: size %d, %v", r.Operation, r.Size, r.Error))
	}
	delete(s.partial, r.Conn)
	return s.w.Free(r.Conn)
}

// TestSlowloris serves line echo, through a watcher, to a few
// well-behaved clients while thousands of connections trickle a line that
// never ends, a byte per interval each. It checks that the well-behaved
// clients are served throughout, each round of stLorisTrips round trips
// within stTimeout; that the watcher keeps every slowloris connection
// with its read pending and reads every byte; that a slowloris
// connection costs at most stLorisConnMem of heap; and that the swap
// buffer stays within its bound. GALE_LONG=1 runs stLorisLong.
//
// How fast the well-behaved clients are served beside the slowloris is
// a measurement, not a behaviour: it depends on the machine's load, and
// BenchmarkSlowloris measures it. The test logs the round trips per
// second it saw.
func TestSlowloris(t *testing.T) { backendtest.Run(t, testSlowloris) }

func testSlowloris(t *testing.T) {
	cfg := stLorisCI
	if stLong() {
		cfg = stLorisLong
	}
	w := stWatcher(t, aio.Config{})
	srv := stStartLines(t, w)
	good := stDialMany(t, srv.ln.Addr().String(), stLorisGood)
	var before []float64
	for range 3 {
		before = append(before, faulttest.LineTrips(t, good, stLorisTrips, stTimeout))
	}

	base := leaktest.Measure()
	loris := stDialMany(t, srv.ln.Addr().String(), cfg.conns)
	stWaitFor(t, nil, "every slowloris connection delegated", func() bool {
		s := w.Stats().Total()
		return s.Conns == stLorisGood+cfg.conns && s.PendingReads == s.Conns
	})
	in0 := w.Stats().Total().BytesRead
	tr := faulttest.StartTrickle(loris, cfg.interval, stTimeout)
	var beside []float64
	for begin := time.Now(); time.Since(begin) < cfg.duration && !t.Failed(); {
		beside = append(beside, faulttest.LineTrips(t, good, stLorisTrips, stTimeout))
	}
	if err := tr.End(); err != nil {
		t.Fatal(err)
	}
	held, s := leaktest.Measure(), w.Stats().Total()
	sent := tr.Sent()
	stLorisRead(t, w, in0, uint64(sent)+uint64(len(beside)*stLorisGood*stLorisTrips*64))
	for _, c := range loris {
		c.Close()
	}
	stWaitFor(t, nil, "the slowloris connections freed", func() bool { return w.Stats().Total().Conns == stLorisGood })
	t.Logf("%d well-behaved conns: %.0f round trips/s before the slowloris conns, %.0f beside them (medians of %d and %d rounds)",
		stLorisGood, faulttest.Median(before), faulttest.Median(beside), len(before), len(beside))
	stCheckLoris(t, cfg, held.Heap-base.Heap, sent, s)
	srv.errs.check(t, "echo loop")
}

// stLorisRead waits, up to stTimeout, for w to have read want bytes
// since in0, and fails with what it read.
func stLorisRead(t *testing.T, w *aio.Watcher, in0, want uint64) {
	t.Helper()
	var got uint64
	for end := time.Now().Add(stTimeout); ; time.Sleep(time.Millisecond) {
		if got = w.Stats().Total().BytesRead - in0; got >= want {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the watcher read %d bytes in %v after the trickle ended, want %d (slowloris and well-behaved clients together)", got, stTimeout, want)
		}
	}
}

// stCheckLoris checks and logs the slowloris figures; s is the watcher's
// counters with the slowloris connections open.
func stCheckLoris(t *testing.T, cfg stLoris, heap, sent int64, s aio.LoopStats) {
	t.Helper()
	perConn := heap / int64(cfg.conns)
	t.Logf("%d slowloris conns, a byte each per %v of trickling, for %v (%d bytes); heap %d B per slowloris conn, swap %d KiB",
		cfg.conns, cfg.interval, cfg.duration, sent, perConn, s.SwapBytes>>10)
	if perConn > stLorisConnMem {
		t.Errorf("heap per slowloris conn = %d bytes, want at most %d", perConn, stLorisConnMem)
	}
	if want := stLorisGood + cfg.conns; s.Conns != want || s.PendingReads != want {
		t.Errorf("with the slowloris conns open: Conns %d, PendingReads %d, want %d each", s.Conns, s.PendingReads, want)
	}
	if limit := runtime.GOMAXPROCS(0) * 16 * 64 << 10; s.SwapBytes > limit { // Loops × SwapChunks × BufferSize
		t.Errorf("SwapBytes = %d, want at most %d", s.SwapBytes, limit)
	}
}

// BenchmarkSlowloris measures what TestSlowloris leaves out: the line
// round trips of stLorisGood well-behaved clients, each on its own
// goroutine, beside stLorisCI's slowloris connections, idle (open with
// their reads pending, the trickle paused, as between their bytes) and
// trickling. One op is one round trip; the throughput kept beside the
// slowloris is Trickling's ops/s over Idle's, on the same backend:
//
//	go test -run '^$' -bench Slowloris -count 6 ./aio/ | tee loris.txt
//	benchstat loris.txt
func BenchmarkSlowloris(b *testing.B) {
	for _, state := range []string{"Idle", "Trickling"} {
		b.Run(state, func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) { benchSlowloris(b, state == "Trickling") })
		})
	}
}

func benchSlowloris(b *testing.B, trickling bool) {
	cfg := stLorisCI
	w := stWatcher(b, aio.Config{})
	srv := stStartLines(b, w)
	good := stDialMany(b, srv.ln.Addr().String(), stLorisGood)
	loris := stDialMany(b, srv.ln.Addr().String(), cfg.conns)
	stWaitFor(b, nil, "every slowloris connection delegated", func() bool {
		s := w.Stats().Total()
		return s.Conns == stLorisGood+cfg.conns && s.PendingReads == s.Conns
	})
	tr := faulttest.StartTrickle(loris, cfg.interval, stTimeout)
	tr.Paused.Store(!trickling)
	faulttest.BenchLineTrips(b, good, stTimeout)
	b.StopTimer()
	if err := tr.End(); err != nil {
		b.Fatal(err)
	}
	srv.errs.check(b, "echo loop")
}

// stDialMany opens n connections to addr, 16 dials at a time, closed at
// cleanup.
func stDialMany(t testing.TB, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	err := stParallel(16, n, func(i int) error {
		c, err := net.DialTimeout("tcp", addr, stTimeout)
		if err != nil {
			return fmt.Errorf("dial %d of %d: %w", i, n, err)
		}
		conns[i] = c
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return conns
}
