package engine

import (
	"sync/atomic"

	"github.com/galeio/gale/internal/loop"
)

// eloop is the engine's part of one event loop: its read buffer, shared
// by its connections, and the connections it serves. Everything but the
// counters belongs to the loop goroutine.
type eloop struct {
	e   *Engine
	idx int
	l   *loop.Loop
	buf []byte // the read buffer; valid for one OnData at a time
	// batch is set where the backend defers sends to its next wait
	// (loop.DefersSends: io_uring): small writes made while a
	// connection's OnData runs are queued and sent by the flush that
	// follows, as one send instead of one each.
	batch bool
	// readAhead is set where the backend takes bytes from the socket
	// ahead of a receive (loop.ReadsAhead: io_uring's multishot).
	readAhead bool
	in        Inbound
	plain     []byte // TLS plaintext, decrypted for OnData (made on first use)
	// nconns counts the attached connections, for Stats; the loop's
	// table of owners holds them (eachConn).
	nconns atomic.Int64
	// cur is the conn whose callback runs now: the producer of what that
	// callback writes (Engine.charge).
	cur *Conn
	// draining is set by Shutdown's close task: a connection attached
	// afterwards (accepted just before the listener closed, posted from
	// another loop) is closed as soon as it opens.
	draining bool
	// dead is set when the loop's backend failed (fault): what reaches
	// the loop afterwards is closed at once.
	dead bool
	// rechecking is set while recheck runs: a water call within it that
	// sees the budget crossed again (others' writes and sends move the
	// total) leaves the rest to the running pass instead of nesting one.
	rechecking bool
	// panicErr is the panic of the callback that returned the panicked
	// action, until act resets its connection (see contain).
	panicErr *PanicError
	stats    loopCounters
	// assigned counts the connections given to this loop, from the moment
	// they are created (on another goroutine, maybe) until they close:
	// LeastConns must see a connection still on its way to a busy loop.
	assigned atomic.Int64
}

func (lp *eloop) unassign() { lp.assigned.Add(-1) }

// loopCounters are read by Stats from any goroutine.
type loopCounters struct {
	bytesIn      atomic.Uint64
	bytesOut     atomic.Uint64
	queued       atomic.Int64
	paused       atomic.Int64
	timers       atomic.Int64
	acceptErrors atomic.Uint64
	limits       [numLimits]atomic.Uint64 // LimitStats
	accepted     atomic.Uint64
	refused      [numRefused]atomic.Uint64 // RefusedStats
	ev           eventCounters             // Handshakes, Deadlines, Errors
}

// Provide lends the loop's read buffer. The backend fills it and hands it
// to one connection's Complete, which consumes or copies the bytes before
// returning, so the same space serves every receive (poller contract).
func (lp *eloop) Provide() ([]byte, int) { return lp.buf, 0 }

// Transient tells a completion backend that OnData is done with a
// receive's bytes when it returns (deliver copies what it keeps), so the
// backend may lend its own buffer instead of copying into buf.
func (lp *eloop) Transient() bool { return true }

// Offloads tells Auto whether the handler runs its users' code on other
// goroutines (httpd's does: loop.Offloader; so do callbacks on
// Options.Pool); an engine's own callbacks run on the loop.
func (lp *eloop) Offloads() bool {
	if lp.e.opts.Pool != nil {
		return true
	}
	o, ok := lp.e.handler.(loop.Offloader)
	return ok && o.Offloads()
}

// Commit does nothing: the buffer is free again once Complete returns.
func (lp *eloop) Commit(int, int) {}

// flush is the loop's end-of-iteration hook: it publishes the gauge of
// connection timers (the engine's own, the ticks and the pool's trim,
// are not counted).
func (lp *eloop) flush() bool {
	n := lp.l.Timers()
	if lp.idx == 0 && lp.e.tick.Scheduled() {
		n--
	}
	if lp.idx == 0 && lp.e.trim.Scheduled() {
		n--
	}
	lp.stats.timers.Store(int64(n))
	return false
}

func newEloop(e *Engine, idx int) *eloop {
	lp := &eloop{e: e, idx: idx, buf: make([]byte, e.opts.ReadBufferSize)}
	return lp
}

// addConn counts c, attached, on its loop; admit counted it in the
// engine's connections.
func (lp *eloop) addConn(c *Conn) {
	lp.nconns.Add(1)
}

func (lp *eloop) removeConn(c *Conn) {
	lp.nconns.Add(-1)
	lp.unassign()
	c.releasePeer()
	lp.e.dropConn()
}

// enter records that a callback of c's starts, and returns the conn
// whose callback it interrupts (nil, unless callbacks nest); leave
// records its end. They run on c's loop.
func (lp *eloop) enter(c *Conn) (prev *Conn) {
	prev, lp.cur = lp.cur, c
	return prev
}

func (lp *eloop) leave(c, prev *Conn) {
	lp.cur = prev
	if c.lbits.has(bProducing) && !c.lbits.has(bPaused) && !c.lbits.has(bClosed) {
		c.water() // charged during the callback: pause now
	}
}

// recheck applies backpressure anew to each of lp's connections but skip,
// after the engine's output passed its budget. It runs on lp's loop.
func (lp *eloop) recheck(skip *Conn) {
	if lp.rechecking {
		return
	}
	lp.rechecking = true
	lp.eachConn(func(c *Conn) {
		if c != skip {
			c.water()
		}
	})
	lp.rechecking = false
}

// eachConn calls f with each connection attached to lp, the last attached
// first; f may close connections, its own or others. It runs on lp's loop.
func (lp *eloop) eachConn(f func(c *Conn)) {
	lp.l.Owners(func(o loop.Owner) {
		if c, ok := o.(*connOwner); ok {
			f((*Conn)(c))
		}
	})
}
