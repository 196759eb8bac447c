package engine_test

// What a peer can make a plain TCP engine hold, one sub-test of
// TestLimits per row of SECURITY.md: each drives a hostile
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
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// limServe bounds a well-behaved client's echo round trip beside a
// hostile client at its bound.
const limServe = 2 * time.Second

// limCases are TestLimits' sub-tests, each run on every backend. Their
// names are cited by SECURITY.md: keep them.
var limCases = []struct {
	name string
	f    func(t *testing.T)
}{
	{"descriptors", testLimitsDescriptors},
	{"backlog", testLimitsBacklog},
	{"idle", testLimitsIdle},
	{"keepalive", testLimitsKeepAlive},
	{"goroutines", testLimitsGoroutines},
	{"timers", testLimitsTimers},
	{"input", testLimitsInput},
	{"output", testLimitsOutput},
	{"budget", testLimitsBudget},
	{"closing", testLimitsClosing},
	{"halfclose", testLimitsHalfClose},
	{"reset", testLimitsReset},
	{"flood", testLimitsFlood},
	{"churn", testLimitsChurn},
	{"pools", testLimitsPools},
	{"shutdown", testLimitsShutdown},
	{"udp", testLimitsUDP},
}

// TestLimits drives a hostile client to each bound of the engine's
// limits table (SECURITY.md) on every backend, and checks that
// a well-behaved client on the same loop is served meanwhile. Its first
// sub-test checks the defaults the table gives.
func TestLimits(t *testing.T) {
	t.Run("defaults", testLimitsDefaults)
	for _, lc := range limCases {
		t.Run(lc.name, func(t *testing.T) { backendtest.Run(t, lc.f) })
	}
}

// testLimitsDefaults checks the defaults SECURITY.md gives.
func testLimitsDefaults(t *testing.T) {
	o, err := engine.Defaults(engine.Options{})
	if err != nil {
		t.Fatalf("the zero Options: %v", err)
	}
	for _, d := range []struct {
		name      string
		got, want any
	}{
		{"ReadBufferSize", o.ReadBufferSize, 64 << 10},
		{"MaxInputBuffer", o.MaxInputBuffer, 4 << 20},
		{"WriteHighWater", o.WriteHighWater, 64 << 10},
		{"WriteLowWater", o.WriteLowWater, 16 << 10},
		{"MaxWriteBuffer", o.MaxWriteBuffer, 16 << 20},
		{"OutputBudget", o.OutputBudget, int64(0)},
		{"IdleTimeout", o.IdleTimeout, time.Duration(0)},
		{"ReadIdleTimeout", o.ReadIdleTimeout, time.Duration(0)},
		{"ShutdownTimeout", o.ShutdownTimeout, 10 * time.Second},
		{"CloseOnDeadline", o.CloseOnDeadline, false},
		{"accepted connections' keep-alive", engine.DefaultKeepAlive, limSeconds(limKeepAliveSecs)},
		{"accept back-off, first", engine.MinBackoff, 5 * time.Millisecond},
		{"accept back-off, longest", engine.MaxBackoff, time.Second},
		{"pool trim interval", engine.TrimInterval, time.Second},
	} {
		if d.got != d.want {
			t.Errorf("default %s = %v, want %v (SECURITY.md)", d.name, d.got, d.want)
		}
	}
}

// limKeepAliveSecs is package net's keep-alive period, which accepted
// connections get by default: probes after 15 s of silence, then every
// 15 s.
const limKeepAliveSecs = 15

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

// limLine is a well-behaved client's line: 1 KiB with its newline.
var limLine = append(bytes.Repeat([]byte("l"), 1023), '\n')

// limServedLine checks that good, a well-behaved client of a line echo
// server (etLineEcho), gets a line echoed within limServe.
func limServedLine(t *testing.T, good net.Conn, when string) {
	t.Helper()
	good.SetDeadline(time.Now().Add(limServe))
	defer good.SetDeadline(time.Time{})
	got := make([]byte, len(limLine))
	_, werr := good.Write(limLine)
	rerr := etReadInto(good, got)
	if werr != nil || rerr != nil || !bytes.Equal(got, limLine) {
		t.Fatalf("%s: a well-behaved client's line round trip: write %v, read %v (bound %v)", when, werr, rerr, limServe)
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
	peaks := leaktest.Peaks(t, func() int64 { return e.Stats().Queued })
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
	queued := peaks()[0]
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
// net/http holds a 4 KiB buffer and a blocked goroutine. The live heap
// per non-reader is checked too: on io_uring it also holds what the
// multishot receive took after the pause, at most 128 KiB since the
// multishot has a byte limit (Linux 6.17; it was about 1 MiB, up to 3.8
// MiB under -race), and without the limit it is only logged.
func testLimitsOutput(t *testing.T) {
	const high, rbuf, spill, capped, bad = 64 << 10, 64 << 10, 128 << 10, 16 << 20, 2
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 1})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	etPattern(1) // made once, before the heap is measured
	base := leaktest.Measure()
	peaks := leaktest.Peaks(t, func() int64 { return e.Stats().Queued })
	cs := limNonReaders(t, h, a, bad)
	// Reached once a queue passed the mark. (Both need not be paused at
	// once: on io_uring a client that floods without reading can stall in
	// TCP's retransmission back-off for seconds, after the kernel dropped
	// its segments while its reading was paused.)
	etWaitFor(t, "a non-reader paused", func() bool { return e.Stats().Total().Paused > 0 })
	time.Sleep(100 * time.Millisecond) // the flood goes on, against the mark
	held := leaktest.Measure()
	queued := peaks()[0]
	limServed(t, good, 1<<20, "beside clients that do not read")
	grew := (held.Heap - base.Heap) / bad
	t.Logf("%d clients that do not read: Stats().Queued peaked at %d (%d each); the live heap grew by %d each",
		bad, queued, queued/bad, grew)
	if limit := int64(bad * (high + rbuf)); queued > limit {
		t.Errorf("Stats().Queued peaked at %d with %d clients that do not read, want at most %d (WriteHighWater and one read each)", queued, bad, limit)
	}
	if limit := int64(high + rbuf + spill); grew > limit && !limSpillUnbounded(e) {
		t.Errorf("the live heap grew by %d per client that does not read, want at most %d (WriteHighWater, one read, and on io_uring %d of spill)", grew, limit, spill)
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

// testLimitsInput: a client sends a line that never ends. The handler
// (etLineEcho, with Inbound.ReadUntil) leaves it unconsumed, and the
// engine keeps it for the next OnData, up to MaxInputBuffer (4 MiB by
// default; 256 KiB here): once OnData leaves more, the connection closes
// with ErrInputBufferFull. Each OnData presents the whole partial line
// again, so a client that trickles bytes into it costs a scan of up to
// MaxInputBuffer per arrival: the well-behaved client is served
// meanwhile too. The buffer is grown by append, so its capacity may pass
// the bound by Go's growth factor (a quarter at these sizes).
func testLimitsInput(t *testing.T) {
	const maxIn, rbuf = 256 << 10, 64 << 10
	h := etNewHandler()
	h.data = etLineEcho
	e := etStart(t, h, engine.Options{Loops: 1, MaxInputBuffer: maxIn})
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	bad := etDial(t, a)
	c := etOpened(t, h)
	bad.SetWriteDeadline(time.Now().Add(etWait))
	if _, err := bad.Write(bytes.Repeat([]byte("x"), maxIn-64)); err != nil {
		t.Fatal(err)
	}
	for i := range 64 { // to the bound, a byte at a time
		if _, err := bad.Write([]byte("y")); err != nil {
			t.Fatal(err)
		}
		if i%16 == 0 {
			limServedLine(t, good, "beside a partial line growing to MaxInputBuffer")
		}
	}
	var held int
	etWaitFor(t, "MaxInputBuffer bytes held", func() bool {
		n, capacity := engine.InputLen(c)
		held = capacity
		return n == maxIn
	})
	t.Logf("a partial line of MaxInputBuffer = %d bytes is held in a buffer of %d", maxIn, held)
	if held > maxIn+maxIn/4+rbuf {
		t.Errorf("the partial line's buffer holds %d bytes, want at most %d (MaxInputBuffer, append's growth and a read)", held, maxIn+maxIn/4+rbuf)
	}
	limServedLine(t, good, "beside a partial line of MaxInputBuffer")
	bad.Write([]byte("z")) // one byte past
	if ev := etClosed(t, h); ev.c != c || !errors.Is(ev.err, engine.ErrInputBufferFull) {
		t.Errorf("OnClose(%p, %v), want (%p, ErrInputBufferFull)", ev.c, ev.err, c)
	}
	limServedLine(t, good, "after a partial line passed MaxInputBuffer")
}

// testLimitsPools: the output chunks that clients which do not read made
// the engine allocate go back to its pool when they leave, and the pool
// lets go of what no write took during a trim interval (1 s): two
// intervals after the burst it holds almost nothing. The well-behaved
// client is served throughout.
func testLimitsPools(t *testing.T) {
	const per, bad = 1 << 20, 4
	clk := engine.NewManualClock(etT0)
	h := etEchoHandler()
	e := etStart(t, h, engine.WithClock(engine.Options{Loops: 1}, clk))
	a := etListen(t, e, "tcp")
	good := etDial(t, a)
	etOpened(t, h)
	var peers []net.Conn
	for range bad {
		p := etDial(t, a)
		etSmallReadBuffer(p)
		etFill(t, etOpened(t, h), per)
		peers = append(peers, p)
	}
	limServed(t, good, 1<<20, "beside a burst of output for clients that do not read")
	for _, p := range peers {
		p.(*net.TCPConn).SetLinger(0) // they leave, and their output is dropped
		p.Close()
	}
	for range bad {
		etClosed(t, h)
	}
	e.Poke()
	after := e.PooledOutput()
	for range 2 {
		etStep(e, clk, engine.TrimInterval)
	}
	left := e.PooledOutput()
	t.Logf("%d clients had %d bytes each queued: the pool held %d bytes when they left, %d two trims later", bad, per, after, left)
	if left > 64<<10 {
		t.Errorf("the output pool holds %d bytes two trim intervals after the burst, want at most 64 KiB", left)
	}
	limServed(t, good, 1<<20, "after the burst")
}
