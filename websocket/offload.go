package websocket

import (
	"sync"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/workpool"
)

// Callbacks on Options.Pool. The loop reads, checks and answers frames as
// always; where it would call the Handler, it queues the call in the
// connection's poolQueue, the message's bytes copied, and a worker of the
// pool makes the calls in order. While MaxQueued bytes wait, the engine
// connection is not read (workpool.Hold); the worker lets it read again
// (workpool.Unhold, on the loop) once half of them were delivered.

// poolEvent is a Handler call waiting for the pool.
type poolEvent struct {
	kind  poolKind
	typ   MessageType
	final bool
	data  *buf // the payload's copy: the worker returns it
	err   error
}

type poolKind uint8

const (
	poolOpen poolKind = iota
	poolMessage
	poolPing
	poolPong
	poolStart // StreamHandler.OnMessageStart
	poolPiece // StreamHandler.OnMessageData
	poolClose
)

// poolQueue is a connection's calls waiting for the pool: its
// workpool.Job.
type poolQueue struct {
	c  *Conn
	wp *workpool.Pool

	mu     sync.Mutex
	evs    []poolEvent // the calls waiting are evs[head:]
	head   int
	bytes  int  // the calls' cost (eventCost) in evs[head:]
	queued bool // submitted: waiting for a worker, or running
	held   bool // workpool.Hold stopped the reading at MaxQueued
	ended  bool // a callback panicked: only OnClose is left to run
}

// poolCallCost is what a queued call counts against MaxQueued besides
// its payload: about its size in the queue. Empty messages and pings
// carry no payload; counted at nothing, a peer could queue calls without
// end while a callback blocks.
const poolCallCost = 64

// eventCost is what ev counts against MaxQueued.
func eventCost(ev *poolEvent) int {
	if ev.data != nil {
		return poolCallCost + len(ev.data.b)
	}
	return poolCallCost
}

// poolBatch is how many calls of one connection a worker makes before the
// connection goes to the back of the pool's queue.
const poolBatch = 8

// queue returns c's poolQueue, made on first use, or nil when its
// callbacks run on the loop.
func (c *Conn) queue() *poolQueue {
	if c.cfg.pool == nil {
		return nil
	}
	if r := c.rare.Load(); r != nil {
		if q := r.pool.Load(); q != nil {
			return q
		}
	}
	c.wmu.Lock()
	r := c.rareLocked()
	c.wmu.Unlock()
	r.pool.CompareAndSwap(nil, &poolQueue{c: c, wp: c.cfg.pool})
	return r.pool.Load()
}

// push queues ev, with a copy of data. On the loop (or, for OnOpen and
// OnClose, the goroutine that runs them in its place: see hold.go).
func (q *poolQueue) push(ev poolEvent, data []byte) {
	if data != nil {
		ev.data = getBuf(len(data))
		ev.data.b = append(ev.data.b, data...)
	}
	// OnOpen and OnClose may be pushed off the loop (hold.go), and never
	// stop the reading; every other call comes from OnData, on the loop.
	onLoop := ev.kind != poolOpen && ev.kind != poolClose
	q.mu.Lock()
	if q.head > 0 && len(q.evs) == cap(q.evs) {
		// Full, with calls made at its front: move the waiting ones
		// down rather than grow (a queue that never empties would
		// otherwise keep its past).
		n := copy(q.evs, q.evs[q.head:])
		clear(q.evs[n:])
		q.evs, q.head = q.evs[:n], 0
	}
	q.evs = append(q.evs, ev)
	q.bytes += eventCost(&ev)
	hold := onLoop && !q.held && q.bytes >= q.wp.MaxQueued
	q.held = q.held || hold
	start := !q.queued
	q.queued = true
	q.mu.Unlock()
	if hold {
		workpool.Hold(q.c.ec())
	}
	if start {
		q.wp.Submit(q)
	}
}

// Run makes up to poolBatch of the connection's calls (workpool.Job).
func (q *poolQueue) Run() bool {
	for range poolBatch {
		q.mu.Lock()
		if q.head == len(q.evs) {
			q.queued = false
			q.mu.Unlock()
			return false
		}
		ev := q.evs[q.head]
		q.evs[q.head] = poolEvent{}
		q.head++
		if q.head == len(q.evs) {
			q.evs, q.head = q.evs[:0], 0
			if cap(q.evs) > 4 {
				q.evs = nil // a burst's array goes; a small one stays, so a steady load allocates nothing
			}
		}
		q.bytes -= eventCost(&ev)
		release := q.held && q.bytes <= q.wp.MaxQueued/2
		q.held = q.held && !release
		ended := q.ended
		q.mu.Unlock()
		if release {
			q.release()
		}
		if !ended || ev.kind == poolClose {
			q.run(ev)
		}
		putBuf(ev.data)
	}
	q.mu.Lock()
	more := q.head < len(q.evs)
	q.queued = more
	q.mu.Unlock()
	return more
}

// release lets the engine connection read again, on its loop, unless
// the queue filled up again meanwhile (a later Hold stands).
func (q *poolQueue) release() {
	q.c.ec().Execute(func(ec *engine.Conn) {
		q.mu.Lock()
		held := q.held
		q.mu.Unlock()
		if !held {
			workpool.Unhold(ec)
		}
	})
}

// run makes the call ev.
func (q *poolQueue) run(ev poolEvent) {
	c := q.c
	if ev.kind == poolClose {
		defer c.ec().Recover(nil) // c is closed: a panic is only logged
		c.cfg.handler.OnClose(c, ev.err)
		return
	}
	defer c.ec().Recover(q.panicked)
	var p []byte
	if ev.data != nil {
		p = ev.data.b
	}
	switch ev.kind {
	case poolOpen:
		c.cfg.handler.OnOpen(c)
	case poolMessage:
		c.cfg.handler.OnMessage(c, ev.typ, p)
	case poolPing:
		c.cfg.pinger.OnPing(c, p)
	case poolPong:
		c.cfg.ponger.OnPong(c, p)
	case poolStart:
		c.cfg.stream.OnMessageStart(c, ev.typ)
	case poolPiece:
		c.cfg.stream.OnMessageData(c, p, ev.final)
	}
}

// panicked fails c, whose pooled callback panicked, on its loop, as a
// panic there would (close frame 1011), and drops its calls but OnClose.
func (q *poolQueue) panicked(pe *engine.PanicError) {
	q.mu.Lock()
	q.ended = true
	q.mu.Unlock()
	c := q.c
	c.ec().Execute(func(*engine.Conn) { c.panickedOpen(pe) })
}

// The Handler's calls, on the pool when there is one.

func (c *Conn) callOpen() {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolOpen}, nil)
		return
	}
	c.cfg.handler.OnOpen(c)
}

func (c *Conn) callMessage(typ MessageType, p []byte) {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolMessage, typ: typ}, nonNil(p))
		return
	}
	c.cfg.handler.OnMessage(c, typ, p)
}

func (c *Conn) callPing(p []byte) {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolPing}, nonNil(p))
		return
	}
	c.cfg.pinger.OnPing(c, p)
}

func (c *Conn) callPong(p []byte) {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolPong}, nonNil(p))
		return
	}
	c.cfg.ponger.OnPong(c, p)
}

func (c *Conn) callStart(typ MessageType) {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolStart, typ: typ}, nil)
		return
	}
	c.cfg.stream.OnMessageStart(c, typ)
}

func (c *Conn) callPiece(p []byte, final bool) {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolPiece, final: final}, nonNil(p))
		return
	}
	c.cfg.stream.OnMessageData(c, p, final)
}

func (c *Conn) callClose(err error) {
	if q := c.queue(); q != nil {
		q.push(poolEvent{kind: poolClose, err: err}, nil)
		return
	}
	c.cfg.handler.OnClose(c, err)
}

// nonNil returns p, or an empty slice for nil: an empty payload is still
// a payload (the worker hands over a non-nil slice, as the loop does).
func nonNil(p []byte) []byte {
	if p == nil {
		return []byte{}
	}
	return p
}
