package engine_test

// What a peer can make a plain TCP engine hold, one sub-test of
// TestLimits per row of docs/limits/engine.md: each drives a hostile
// client to the bound, checks the documented outcome there, and checks
// meanwhile that a well-behaved client of the same loop is served.

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/leaktest"
)

// limServe bounds a well-behaved client's echo round trip beside a
// hostile client at its bound.
const limServe = 2 * time.Second

// limCases are TestLimits' sub-tests, each run on every backend. Their
// names are cited by docs/limits/engine.md: keep them.
var limCases = []struct {
	name string
	f    func(t *testing.T)
}{
	{"budget", testLimitsBudget},
	{"keepalive", testLimitsKeepAlive},
	{"output", testLimitsOutput},
}

// TestLimits drives a hostile client to each bound of the engine's
// limits table (docs/limits/engine.md) on every backend, and checks that
// a well-behaved client on the same loop is served meanwhile.
func TestLimits(t *testing.T) {
	for _, lc := range limCases {
		t.Run(lc.name, func(t *testing.T) { backendtest.Run(t, lc.f) })
	}
}

// limSeconds returns n seconds.
func limSeconds(n int) time.Duration { return time.Duration(n) * time.Second }

// limServed checks that good, a well-behaved client of an echo server,
// gets n bytes echoed within limServe: it writes them from a goroutine
// while it reads, as a client that keeps up does.
func limServed(t *testing.T, good net.Conn, n int, when string) {
	t.Helper()
	msg := etPattern(n)
	start := time.Now()
	good.SetDeadline(start.Add(limServe))
	defer good.SetDeadline(time.Time{})
	wrote := make(chan error, 1)
	go func() {
		_, err := good.Write(msg)
		wrote <- err
	}()
	got := make([]byte, n)
	rerr := etReadInto(good, got)
	werr := <-wrote // the write deadline bounds it
	switch {
	case rerr != nil || werr != nil:
		t.Fatalf("%s: a well-behaved client's %d-byte round trip: read %v, write %v (bound %v)", when, n, rerr, werr, limServe)
	case !bytes.Equal(got, msg):
		t.Fatalf("%s: a well-behaved client's echo differs from what it sent", when)
	}
}

// limNonReaders dials n clients of a that send without end and never
// read, each on a goroutine of its own until its write fails (the test's
// end closes it, or etWait passes). The server's queue for each then
// fills as fast as the engine lets it.
func limNonReaders(t *testing.T, h *etHandler, a net.Addr, n int) []*engine.Conn {
	t.Helper()
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // after the closes below: cleanups run last first
	var cs []*engine.Conn
	for range n {
		p := etDial(t, a)
		etSmallReadBuffer(p)
		cs = append(cs, etOpened(t, h))
		p.SetWriteDeadline(time.Now().Add(etWait))
		wg.Go(func() {
			for chunk := etChunk64K; ; {
				if _, err := p.Write(chunk); err != nil {
					return
				}
			}
		})
		t.Cleanup(func() { p.Close() })
	}
	return cs
}

// testLimitsBudget: clients that never read what the server sends them
// hold the engine's output over Options.OutputBudget. Every connection
// with output queued stops reading until it is sent, so the non-readers,
// which also send without end, are no longer read; a connection that
// fans output out to others stays held until the total is under the
// budget (TestOutputBudgetFanOut). A well-behaved client, whose echo
// queues and drains, must still be served: it used to be held with the
// fan-out sources until the total fell, which non-readers never let it
// do (on io_uring, where every reply made in OnData is queued, the
// second round trip never came back).
func testLimitsBudget(t *testing.T) {
	// push is what the server has for each non-reader: four times over
	// the budget, far more than their sockets' buffers absorb, so the
	// total stays over.
	const budget, push, rbuf, bad = 256 << 10, 1 << 20, 16 << 10, 4
	h := etEchoHandler()
	// Watermarks far above the budget: the budget is the bound reached.
	o := engine.Options{Loops: 1, OutputBudget: budget, ReadBufferSize: rbuf, WriteHighWater: 8 << 20, MaxWriteBuffer: 16 << 20}
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	peaks := etSampleMem(t, e)
	for _, c := range limNonReaders(t, h, a, bad) {
		etFill(t, c, push) // they never read it
	}
	etWaitFor(t, "every non-reader paused over the budget", func() bool {
		s := e.Stats()
		return s.Queued > budget && s.Total().Paused == bad
	})
	for range 10 {
		limServed(t, good, 1<<10, "over the budget")
	}
	limServed(t, good, 1<<20, "over the budget")
	// Past the budget, each connection queues at most the output of the
	// reads in flight when it went over: two, of rbuf bytes each.
	_, queued := peaks()
	t.Logf("%d non-readers with %d bytes pushed to each, over a budget of %d: Stats().Queued peaked at %d", bad, push, budget, queued)
	if limit := int64(bad*(push+len(etChunk64K)) + (bad+1)*2*rbuf); queued > limit {
		t.Errorf("Stats().Queued peaked at %d, want at most %d (what was pushed, and each connection's last two reads)", queued, limit)
	}
}

// testLimitsOutput: clients that send without end and never read what
// the server echoes. With the default options, reading from each pauses
// once more than WriteHighWater (64 KiB) is queued for it, so its queue
// holds at most that and the output of one read (ReadBufferSize, 64
// KiB); it resumes at WriteLowWater. Output the application pushes to a
// client that does not read (a broadcast) is capped by MaxWriteBuffer (16
// MiB): the Write that finds that much queued fails with
// ErrWriteBufferFull, and the connection closes with it. The high water
// mark was 1 MiB: a peer made the server hold 1 MiB per connection where
// net/http holds a 4 KiB buffer and a blocked goroutine.
func testLimitsOutput(t *testing.T) {
	const high, rbuf, capped, bad = 64 << 10, 64 << 10, 16 << 20, 2
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	etPattern(1) // made once, before the heap is measured
	base := leaktest.Measure()
	peaks := etSampleMem(t, e)
	cs := limNonReaders(t, h, a, bad)
	etWaitFor(t, "every non-reader paused", func() bool { return e.Stats().Total().Paused == bad })
	held := leaktest.Measure()
	_, queued := peaks()
	limServed(t, good, 1<<20, "beside clients that do not read")
	// The heap is logged, not checked: on io_uring it also holds what the
	// multishot receive took before the pause (docs/limits/engine.md).
	t.Logf("%d clients that do not read: Stats().Queued peaked at %d (%d each); the live heap grew by %d each",
		bad, queued, queued/bad, (held.Heap-base.Heap)/bad)
	if limit := int64(bad * (high + rbuf)); queued > limit {
		t.Errorf("Stats().Queued peaked at %d with %d clients that do not read, want at most %d (WriteHighWater and one read each)", queued, bad, limit)
	}

	// The application pushes to one of them until its backlog is full.
	c := cs[0]
	var err error
	for i := 0; err == nil && i < 2*capped/len(etChunk64K); i++ {
		_, err = c.Write(etChunk64K)
	}
	if !errors.Is(err, engine.ErrWriteBufferFull) {
		t.Fatalf("pushing %d bytes to a client that does not read: Write = %v, want ErrWriteBufferFull", 2*capped, err)
	}
	if ev := etClosed(t, h); ev.c != c || !errors.Is(ev.err, engine.ErrWriteBufferFull) {
		t.Errorf("OnClose(%p, %v), want (%p, ErrWriteBufferFull)", ev.c, ev.err, c)
	}
	limServed(t, good, 1<<20, "after a backlog reached MaxWriteBuffer")
}
