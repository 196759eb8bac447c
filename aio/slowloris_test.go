package aio_test

// Slowloris: thousands of connections that each send a byte now and then,
// each holding a pending read on the watcher, while a few well-behaved
// clients run echo round trips (stresstest.Slowloris). The well-behaved
// clients must be served, and a pending nil-buffer read must hold no swap
// memory; BenchmarkSlowloris measures the well-behaved clients'
// throughput.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"testing"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// stLorisConnMem bounds the heap one slowloris connection may cost, both
// ends together (they share the process): the watcher's connection and
// its pending read (into the swap buffer: no memory of its own), the
// server's few bytes of partial line, and the client's net.Conn.
const stLorisConnMem = 4 << 10

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

// target returns s as the target of a slowloris run: it holds a
// connection with its read pending.
func (s *stLineServer) target() stresstest.LorisTarget {
	return stresstest.LorisTarget{
		Addr:    s.ln.Addr(),
		Timeout: stTimeout,
		Holds: func(n int) bool {
			st := s.w.Stats().Total()
			return st.Conns == n && st.PendingReads == n
		},
		BytesIn: func() uint64 { return s.w.Stats().Total().BytesRead },
		ConnMem: stLorisConnMem,
	}
}

// TestSlowloris serves line echo, through a watcher, to
// stresstest.Slowloris's well-behaved clients while thousands of its
// connections trickle a line that never ends. Slowloris checks that the
// well-behaved clients are served throughout, each round within
// stTimeout; that the watcher keeps every slowloris connection with its
// read pending and reads every byte; and that a slowloris connection
// costs at most stLorisConnMem of heap. The test checks besides the
// watcher's counters with the slowloris connections open, and that the
// swap buffer stays within its bound.
//
// How fast the well-behaved clients are served beside the slowloris is
// a measurement, not a behaviour: it depends on the machine's load, and
// BenchmarkSlowloris measures it. The test logs the round trips per
// second it saw.
func TestSlowloris(t *testing.T) { backendtest.Run(t, testSlowloris) }

func testSlowloris(t *testing.T) {
	w := stWatcher(t, aio.Config{})
	srv := stStartLines(t, w)
	tg := srv.target()
	var s aio.LoopStats
	var open int
	tg.Held = func(n int) { s, open = w.Stats().Total(), n }
	stresstest.Slowloris(t, tg)
	t.Logf("swap %d KiB with the slowloris conns open", s.SwapBytes>>10)
	if s.Conns != open || s.PendingReads != open {
		t.Errorf("with the slowloris conns open: Conns %d, PendingReads %d, want %d each", s.Conns, s.PendingReads, open)
	}
	if limit := runtime.GOMAXPROCS(0) * 16 * 64 << 10; s.SwapBytes > limit { // Loops × SwapChunks × BufferSize
		t.Errorf("SwapBytes = %d, want at most %d", s.SwapBytes, limit)
	}
	srv.errs.check(t, "echo loop")
}

// BenchmarkSlowloris measures what TestSlowloris leaves out
// (stresstest.BenchSlowloris): the line round trips of the well-behaved
// clients, each on its own goroutine, beside the slowloris connections,
// idle (open with their reads pending, the trickle paused, as between
// their bytes) and trickling. One op is one round trip; the throughput
// kept beside the slowloris is Trickling's ops/s over Idle's, on the same
// backend:
//
//	go test -run '^$' -bench Slowloris -count 6 ./aio/ | tee loris.txt
//	benchstat loris.txt
func BenchmarkSlowloris(b *testing.B) {
	for _, state := range []string{"Idle", "Trickling"} {
		b.Run(state, func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) {
				srv := stStartLines(b, stWatcher(b, aio.Config{}))
				stresstest.BenchSlowloris(b, srv.target(), state == "Trickling")
				srv.errs.check(b, "echo loop")
			})
		})
	}
}
