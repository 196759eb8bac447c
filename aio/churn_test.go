package aio_test

// Churn: short connections, one after another from several dialers,
// against one watcher's echo loop. Each dials, sends a message, reads its
// echo and hangs up. Afterwards nothing may be left of them: no
// descriptor, no goroutine, no heap, no connection or request in the
// watcher's counters.

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

const (
	// stChurnCycles is the number of cycles per backend: 5,000 by
	// default, 100,000 with GALE_LONG=1.
	stChurnCycles, stChurnCyclesLong = 5000, 100_000
	// stChurnDialers is how many goroutines dial at once.
	stChurnDialers = 8
	// stChurnMaxMsg is the largest message of a cycle.
	stChurnMaxMsg = 1024
	// stChurnHeapSlack is how much more heap than before the cycles is
	// not a leak: collections leave a little floating garbage. Over
	// 100,000 cycles it catches a leak of 11 bytes a cycle; over 5,000,
	// of 210 bytes.
	stChurnHeapSlack = 1 << 20
)

// stChurnMode is the context of a connection's requests: whether it reads
// into the swap buffer or into a buffer of its own.
type stChurnMode int

const (
	stChurnOwn stChurnMode = iota
	stChurnSwap
)

// stChurnServer accepts on a loopback listener and echoes every
// connection through a watcher: every other connection reads into a
// 4 KiB buffer of its own and writes from it, the others read into the
// swap buffer and write a copy. A connection is freed at end of file.
type stChurnServer struct {
	w               *aio.Watcher
	ln              net.Listener
	accepted, freed atomic.Int64
	errs            stErrs
}

func stStartChurn(t *testing.T, w *aio.Watcher) *stChurnServer {
	s := &stChurnServer{w: w}
	s.ln = stServe(t, w, &s.errs, s.start, s.serve)
	return s
}

func (s *stChurnServer) start(c net.Conn) error {
	if s.accepted.Add(1)%2 == 0 {
		return s.w.Read(stChurnSwap, c, nil)
	}
	return s.w.Read(stChurnOwn, c, make([]byte, 4<<10))
}

func (s *stChurnServer) serve(r aio.OpResult) error {
	mode, _ := r.Context.(stChurnMode)
	switch {
	case r.Operation == aio.OpRead && r.Error == nil && r.Size > 0:
		if r.IsSwapBuffer != (mode == stChurnSwap) {
			s.errs.add(fmt.Errorf("read in mode %d: IsSwapBuffer %v", mode, r.IsSwapBuffer))
		}
		out := r.Buffer[:r.Size]
		if r.IsSwapBuffer {
			out = bytes.Clone(out) // the swap buffer is reused after the next WaitIO
		}
		return s.w.Write(mode, r.Conn, out)
	case r.Operation == aio.OpRead && r.Error == io.EOF:
		s.freed.Add(1)
		return s.w.Free(r.Conn)
	case r.Operation == aio.OpWrite && r.Error == nil && mode == stChurnSwap:
		return s.w.Read(mode, r.Conn, nil)
	case r.Operation == aio.OpWrite && r.Error == nil:
		return s.w.Read(mode, r.Conn, r.Buffer[:cap(r.Buffer)])
	default:
		s.errs.add(fmt.Errorf("%v: size %d, %v", r.Operation, r.Size, r.Error))
		s.freed.Add(1)
		return s.w.Free(r.Conn)
	}
}

// TestChurn runs connect–exchange–disconnect cycles against one watcher's
// echo loop, checks every echo, and then that the process's descriptors,
// goroutines and heap are back to where they were before the cycles
// (tolerances: no descriptor, leaktest.GoroutineSlack goroutines,
// stChurnHeapSlack bytes) and that the watcher holds no connection and no
// pending request.
func TestChurn(t *testing.T) { backendtest.Run(t, testChurn) }

func testChurn(t *testing.T) {
	cycles := stChurnCycles
	if stLong() {
		cycles = stChurnCyclesLong
	}
	w := stWatcher(t, aio.Config{})
	srv := stStartChurn(t, w)
	addr := srv.ln.Addr().String()
	released := func() bool {
		s := w.Stats().Total()
		return s.Conns == 0 && s.PendingReads == 0 && s.PendingWrites == 0 && srv.freed.Load() == srv.accepted.Load()
	}

	// A warm-up, so that what the watcher and the runtime allocate once
	// (swap chunks, slot table pages, request pool) counts in the baseline.
	if _, err := stChurn(addr, 200, stChurnDialers); err != nil {
		t.Fatal(err)
	}
	stWaitFor(t, nil, "every connection released after the warm-up", released)
	before, s0 := leaktest.Measure(), w.Stats().Total()
	start := time.Now()
	sent, err := stChurn(addr, cycles, stChurnDialers)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	stWaitFor(t, nil, "every connection released", released)
	after, ok := leaktest.Settle(before, stChurnHeapSlack)
	s := w.Stats().Total()
	t.Logf("%d cycles from %d dialers in %v (%.0f/s); fds %d -> %d, goroutines %d -> %d, heap %.2f -> %.2f MiB, swap %d KiB",
		cycles, stChurnDialers, elapsed.Round(time.Millisecond), float64(cycles)/elapsed.Seconds(),
		before.FDs, after.FDs, before.Goroutines, after.Goroutines, stMiB(before.Heap), stMiB(after.Heap), s.SwapBytes>>10)
	if !ok {
		t.Errorf("after %d cycles: fds %d -> %d (want no more), goroutines %d -> %d (want at most %d more), heap %d -> %d bytes (want at most %d more)",
			cycles, before.FDs, after.FDs, before.Goroutines, after.Goroutines, leaktest.GoroutineSlack,
			before.Heap, after.Heap, stChurnHeapSlack)
	}
	if in, out := s.BytesRead-s0.BytesRead, s.BytesWritten-s0.BytesWritten; in != uint64(sent) || out != uint64(sent) {
		t.Errorf("watcher read %d and wrote %d bytes in %d cycles, want %d each", in, out, cycles, sent)
	}
	if a, f := srv.accepted.Load(), srv.freed.Load(); a != f {
		t.Errorf("%d connections accepted, %d freed, want as many", a, f)
	}
	srv.errs.check(t, "echo loop")
}

// stChurn runs cycles connect–exchange–disconnect cycles against addr
// from dialers goroutines. It returns the bytes sent (and echoed), or the
// first failure.
func stChurn(addr string, cycles, dialers int) (int64, error) {
	var next, sent atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range dialers {
		wg.Go(func() {
			msg, buf := make([]byte, stChurnMaxMsg), make([]byte, stChurnMaxMsg)
			for first.Load() == nil {
				i := next.Add(1) - 1
				if i >= int64(cycles) {
					return
				}
				n, err := stChurnCycle(addr, i, msg, buf)
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

// stChurnCycle dials addr, sends a message of its own (1 to
// stChurnMaxMsg bytes, depending on i), checks the echo and hangs up.
func stChurnCycle(addr string, i int64, msg, buf []byte) (int, error) {
	c, err := net.DialTimeout("tcp", addr, stTimeout)
	if err != nil {
		return 0, fmt.Errorf("cycle %d: %w", i, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(stTimeout))
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
