package engine_test

import (
	"bytes"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// etFlood is the state of a connection whose handler writes 64 KiB at
// every OnData and wakes itself again, to a peer that never reads.
type etFlood struct {
	cap      int          // write only while the queue stays within cap
	overflow atomic.Bool  // write regardless: the next Write passes the cap
	calls    atomic.Int64 // OnData calls
	maxOut   atomic.Int64 // the largest OutboundBuffered seen
	writeErr atomic.Pointer[error]
}

var etChunk64K = bytes.Repeat([]byte("f"), 64<<10)

// etFloodOrEcho floods connections whose first bytes are "FLOOD" and
// echoes the others.
func etFloodOrEcho(cap int) func(c *engine.Conn, in *engine.Inbound) engine.Action {
	return func(c *engine.Conn, in *engine.Inbound) engine.Action {
		st, _ := c.Context().(*etFlood)
		if st == nil && bytes.HasPrefix(in.Bytes(), []byte("FLOOD")) {
			st = &etFlood{cap: cap}
			c.SetContext(st)
		}
		if st == nil {
			return etEcho(c, in)
		}
		in.Discard(in.Len())
		st.calls.Add(1)
		if st.writeErr.Load() != nil {
			return engine.None
		}
		wrote := false
		if st.overflow.Load() || c.OutboundBuffered()+len(etChunk64K) <= st.cap {
			if _, err := c.Write(etChunk64K); err != nil {
				st.writeErr.Store(&err)
				return engine.None
			}
			wrote = true
		}
		if n := int64(c.OutboundBuffered()); n > st.maxOut.Load() {
			st.maxOut.Store(n)
		}
		if wrote {
			c.Wake() // at once: there may be room for more
		} else {
			// Full: look again in a millisecond (OnDeadline wakes it).
			// Waking at once would spin: the loop would never sleep, and
			// with GOMAXPROCS=1 the test's own clients would get the
			// processor only when the scheduler preempts it.
			c.SetReadDeadline(time.Now().Add(time.Millisecond)) // the peer sends no more
		}
		return engine.None
	}
}

// etRoundTrips runs n 1 KiB echo round trips on each peer at once and
// returns how long they took. Each round trip is bounded by etWait, not
// the whole run: how long n take is a measurement (under Wine and load,
// more than etWait).
func etRoundTrips(t *testing.T, peers []net.Conn, n int) time.Duration {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := bytes.Repeat([]byte{byte('a' + i)}, 1024)
			buf := make([]byte, len(msg))
			defer p.SetDeadline(time.Time{})
			for k := range n {
				p.SetDeadline(time.Now().Add(etWait))
				if _, err := p.Write(msg); err != nil {
					t.Errorf("peer %d round trip %d: %v", i, k, err)
					return
				}
				if err := etReadInto(p, buf); err != nil || !bytes.Equal(buf, msg) {
					t.Errorf("peer %d round trip %d: %v, %q...", i, k, err, buf[:8])
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

func etReadInto(c net.Conn, b []byte) error {
	for n := 0; n < len(b); {
		k, err := c.Read(b[n:])
		if err != nil {
			return err
		}
		n += k
	}
	return nil
}

// TestBackpressureFlood checks the engine against a handler that floods a
// peer that never reads: reading from it pauses above WriteHighWater, its
// queue passes MaxWriteBuffer by one Write at most, the Write that finds it
// full fails
// with ErrWriteBufferFull and closes it, and meanwhile four other
// connections of the same loop keep being served.
func TestBackpressureFlood(t *testing.T) { backendtest.Run(t, testBackpressureFlood) }

func testBackpressureFlood(t *testing.T) {
	const limit = 4 << 20
	const trips = 1000
	h := etNewHandler()
	h.data = etFloodOrEcho(limit)
	h.deadline = func(c *engine.Conn, _ error) engine.Action {
		c.Wake()
		return engine.None
	}
	// The full flood re-arms a 1 ms deadline, and on a slow backend
	// (the net one under Wine) it fires more than h.deadlines holds.
	stopDraining := etDrainEvents(h.deadlines)
	defer stopDraining()
	e := etStart(t, h, engine.Options{Loops: 1, MaxWriteBuffer: limit})
	a := etListen(t, e, "tcp")
	var good []net.Conn
	for range 4 {
		good = append(good, etDial(t, a))
		etOpened(t, h)
	}
	before := etRoundTrips(t, good, trips)

	// Sample the engine's queue all along.
	var maxQueued atomic.Int64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if q := e.Stats().Queued; q > maxQueued.Load() {
				maxQueued.Store(q)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	defer func() {
		select {
		case <-stopSampling:
		default:
			close(stopSampling)
		}
		<-sampled
	}()

	bad := etDial(t, a)
	etSmallReadBuffer(bad)
	bc := etOpened(t, h)
	bad.Write([]byte("FLOOD"))
	etWaitFor(t, "Paused = 1", func() bool { return e.Stats().Total().Paused == 1 })
	etWaitFor(t, "a full queue", func() bool { return bc.OutboundBuffered() > limit-len(etChunk64K) })
	st := bc.Context().(*etFlood)
	calls0 := st.calls.Load()
	during := etRoundTrips(t, good, trips) // each peer fails past etWait
	calls := st.calls.Load() - calls0
	t.Logf("%d round trips on each of 4 conns: %v alone, %v beside the flood (ratio %.2f; %d flood callbacks meanwhile)",
		trips, before, during, float64(during)/float64(before), calls)
	if calls == 0 {
		t.Errorf("the flood handler did not run during the measurement")
	}
	if p := e.Stats().Total().Paused; p != 1 {
		t.Errorf("Paused = %d during the flood, want 1", p)
	}

	st.overflow.Store(true)
	bc.Wake()
	ev := etClosed(t, h)
	if ev.c != bc || !errors.Is(ev.err, engine.ErrWriteBufferFull) {
		t.Errorf("OnClose(%p, %v), want (%p, ErrWriteBufferFull)", ev.c, ev.err, bc)
	}
	if p := st.writeErr.Load(); p == nil || !errors.Is(*p, engine.ErrWriteBufferFull) {
		t.Errorf("the Write past the limit returned %v, want ErrWriteBufferFull", p)
	}
	close(stopSampling)
	<-sampled
	// MaxWriteBuffer caps the backlog a Write finds: the queue may pass it
	// by the last Write accepted.
	if m := st.maxOut.Load(); m > limit+int64(len(etChunk64K)) {
		t.Errorf("OutboundBuffered reached %d, more than MaxWriteBuffer %d and one Write", m, limit)
	}
	if m := maxQueued.Load(); m > limit+int64(len(etChunk64K))+4<<10 {
		t.Errorf("Stats().Queued reached %d, more than MaxWriteBuffer %d, one Write and 4 KiB of echoes", m, limit)
	}
	etWaitFor(t, "Paused = 0 after the close", func() bool { return e.Stats().Total().Paused == 0 })
	etRoundTrips(t, good, 10)
}

// TestBackpressureResume checks that reading stops while a connection's
// queue is above WriteHighWater, and resumes once the peer reads.
func TestBackpressureResume(t *testing.T) { backendtest.Run(t, testBackpressureResume) }

func testBackpressureResume(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		const high = 256 << 10
		h := etEchoHandler()
		e, c, peer := etServe(t, h, engine.Options{Loops: 1, WriteHighWater: high, ReadBufferSize: 4 << 10}, network)
		// Write until the kernel's buffers are full and more than the
		// high water mark is queued.
		total := 0
		for c.OutboundBuffered() <= high {
			n, err := c.Write(etChunk64K)
			if err != nil || total > 64<<20 {
				t.Fatalf("Write = %d, %v after %d bytes, %d queued", n, err, total, c.OutboundBuffered())
			}
			total += n
		}
		etWaitFor(t, "Paused = 1", func() bool { return e.Stats().Total().Paused == 1 })

		// The peer sends while the engine does not read: at most the
		// receive already in flight (one read buffer) is taken.
		in0 := e.Stats().Total().BytesIn
		sent := make(chan error, 1)
		msg := bytes.Repeat([]byte("m"), 256<<10)
		go func() {
			_, err := peer.Write(msg)
			sent <- err
		}()
		e.Poke()
		e.Poke()
		if d := e.Stats().Total().BytesIn - in0; d > 4<<10 {
			t.Errorf("engine read %d bytes from a paused conn, want at most one read buffer", d)
		}
		if p := e.Stats().Total().Paused; p != 1 {
			t.Errorf("Paused = %d, want 1", p)
		}

		// The peer reads: the queue drains, reading resumes, the echo of
		// what it sent follows the output.
		got := etReadFull(t, peer, total+len(msg))
		if bytes.Count(got[:total], []byte("f")) != total {
			t.Fatalf("the output read back differs")
		}
		if !bytes.Equal(got[total:], msg) {
			t.Fatalf("echo of what was sent while paused differs")
		}
		if err := etRecv(t, sent, "the peer's write"); err != nil {
			t.Fatal(err)
		}
		etWaitFor(t, "Paused = 0", func() bool { return e.Stats().Total().Paused == 0 })
	})
}

// etFill writes 64 KiB pieces to c until at least n bytes are queued.
func etFill(t *testing.T, c *engine.Conn, n int) {
	t.Helper()
	for i := 0; c.OutboundBuffered() < n; i++ {
		if i > 1024 {
			t.Fatalf("64 MiB written and only %d bytes queued", c.OutboundBuffered())
		}
		if _, err := c.Write(etChunk64K); err != nil {
			t.Fatal(err)
		}
	}
	etDo(t, c, func(*engine.Conn) {}) // the flush, and its pause, has run
}

// TestOutputBudget checks that once the output queued across the engine
// passes OutputBudget, connections with queued output stop reading, and
// read again when the total falls.
func TestOutputBudget(t *testing.T) { backendtest.Run(t, testOutputBudget) }

func testOutputBudget(t *testing.T) {
	const budget = 256 << 10
	o := engine.Options{Loops: 1, OutputBudget: budget, WriteHighWater: 32 << 20, MaxWriteBuffer: 64 << 20}
	t.Run("one", func(t *testing.T) {
		h := etEchoHandler()
		e, c, peer := etServe(t, h, o, "tcp")
		other := etDial(t, peer.RemoteAddr())
		etOpened(t, h)
		etFill(t, c, budget/2)
		if p := e.Stats().Total().Paused; p != 0 {
			t.Fatalf("Paused = %d with %d queued, under the budget", p, e.Stats().Queued)
		}
		etFill(t, c, 2*budget)
		if p := e.Stats().Total().Paused; p != 1 {
			t.Fatalf("Paused = %d with %d queued over a budget of %d, want 1", p, e.Stats().Queued, budget)
		}
		etEchoes(t, other, "a conn with nothing queued is served")
		drained := etDrain(peer)
		etWaitFor(t, "Paused = 0", func() bool { return e.Stats().Total().Paused == 0 && e.Stats().Queued == 0 })
		c.Close()
		<-drained
	})
	t.Run("two", func(t *testing.T) {
		h := etEchoHandler()
		e, a, peerA := etServe(t, h, o, "tcp")
		etSmallReadBuffer(peerA)
		etSmallReadBuffer(etDial(t, peerA.RemoteAddr()))
		b := etOpened(t, h)
		etFill(t, a, 64<<10)
		etFill(t, b, 2*budget)
		s := e.Stats()
		if s.Queued <= budget {
			t.Fatalf("Queued = %d, want over the budget", s.Queued)
		}
		if p := s.Total().Paused; p != 2 {
			t.Errorf("Paused = %d with %d and %d bytes queued on two conns, %d in all over a budget of %d: want both paused",
				p, a.OutboundBuffered(), b.OutboundBuffered(), s.Queued, budget)
		}
	})
}

// etSmallReadBuffer shrinks c's receive buffer, so that the kernel
// absorbs little of what a peer that never reads is sent, and the
// engine's queue fills soon. Not for a peer that reads later: TCP with so
// small a window crawls.
func etSmallReadBuffer(c net.Conn) {
	if rb, ok := c.(interface{ SetReadBuffer(int) error }); ok {
		rb.SetReadBuffer(4 << 10)
	}
}

// TestOutputPoolShrinks checks that the output chunks slow readers made
// the engine allocate are let go once they are no longer used: after a
// quiet while the pool keeps almost nothing. It never shrank: 106 MiB
// stayed in the heap after every slow reader was gone.
func TestOutputPoolShrinks(t *testing.T) { backendtest.Run(t, testOutputPoolShrinks) }

func testOutputPoolShrinks(t *testing.T) {
	const perConn, conns = 8 << 20, 4
	clk := engine.NewManualClock(etT0)
	h := etEchoHandler()
	o := engine.WithClock(engine.Options{Loops: 1, WriteHighWater: perConn, MaxWriteBuffer: 2 * perConn}, clk)
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	var cs []*engine.Conn
	var peers []net.Conn
	for range conns {
		p := etDial(t, a)
		c := etOpened(t, h)
		etFill(t, c, perConn) // slow readers: the queues fill
		cs, peers = append(cs, c), append(peers, p)
	}
	var drained []<-chan []byte
	for i, c := range cs { // they read at last, and leave
		drained = append(drained, etDrain(peers[i]))
		c.Close()
	}
	for range conns {
		etClosed(t, h)
	}
	for _, d := range drained {
		<-d
	}
	if n := e.PooledOutput(); n < conns*perConn/2 {
		t.Fatalf("the pool holds %d bytes after %d slow readers of %d bytes left; want most of them, ready for reuse", n, conns, perConn)
	}
	for range 10 {
		clk.Advance(time.Second)
		e.Poke()
	}
	if n := e.PooledOutput(); n > 1<<20 {
		t.Errorf("the pool still holds %d bytes after 10 s without use, want at most 1 MiB", n)
	}
}

// TestOutputBudgetFanOut streams through one source connection whose
// OnData copies every byte to three sinks that never read. The budget
// must push back on the producer: the source stops being read while the
// engine's output is over budget. Before, only connections with output
// of their own paused (the sinks, which send nothing anyway), and 48 MiB
// were queued under a 512 KiB budget.
func TestOutputBudgetFanOut(t *testing.T) { backendtest.Run(t, testOutputBudgetFanOut) }

func testOutputBudgetFanOut(t *testing.T) {
	const budget, rbuf = 512 << 10, 16 << 10
	var mu sync.Mutex
	var sinks []*engine.Conn
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if c.Context() == nil {
			role, _ := in.Next(4)
			c.SetContext(string(role))
			if string(role) == "SINK" {
				mu.Lock()
				sinks = append(sinks, c)
				mu.Unlock()
			}
		}
		if c.Context() == "ECHO" {
			return etEcho(c, in)
		}
		if c.Context() == "SRC:" {
			mu.Lock()
			for _, s := range sinks {
				s.Write(in.Bytes())
			}
			mu.Unlock()
		}
		in.Discard(in.Len())
		return engine.None
	}
	o := engine.Options{Loops: 2, OutputBudget: budget, ReadBufferSize: rbuf, WriteHighWater: 32 << 20, MaxWriteBuffer: 64 << 20}
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	var sinkPeers []net.Conn
	for range 3 {
		p := etDial(t, a)
		etSmallReadBuffer(p)
		p.Write([]byte("SINK"))
		etOpened(t, h)
		sinkPeers = append(sinkPeers, p)
	}
	etWaitFor(t, "three sinks", func() bool { mu.Lock(); defer mu.Unlock(); return len(sinks) == 3 })
	src := etDial(t, a)
	etOpened(t, h)
	other := etDial(t, a)
	other.Write([]byte("ECHO"))
	etOpened(t, h)

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			if q := e.Stats().Queued; q > peak.Load() {
				peak.Store(q)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	src.Write([]byte("SRC:"))
	chunk := bytes.Repeat([]byte("s"), 64<<10)
	src.SetWriteDeadline(time.Now().Add(time.Second))
	sent := 0
	for sent < 16<<20 {
		n, err := src.Write(chunk)
		sent += n
		if err != nil {
			break // pushed back: the engine stopped reading the source
		}
	}
	etEchoes(t, other, "a conn that produces nothing for others is still served")
	close(stop)
	<-sampled
	t.Logf("the source sent %d bytes; Stats().Queued peaked at %d under a budget of %d", sent, peak.Load(), budget)
	if limit := int64(budget + 256<<10); peak.Load() > limit {
		t.Errorf("Stats().Queued peaked at %d, want at most %d (the budget and a few reads fanned out)", peak.Load(), limit)
	}
	for _, p := range sinkPeers {
		p.(*net.TCPConn).SetLinger(0) // a reset: the sinks' output is dropped
		p.Close()
	}
	etWaitFor(t, "Paused = 0 once the sinks are gone", func() bool {
		s := e.Stats()
		return s.Queued == 0 && s.Total().Paused == 0
	})
}
