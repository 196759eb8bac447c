package engine

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/loop"
)

// Engine runs event loops that serve connections with a Handler's
// callbacks. Its methods are safe from any goroutine.
type Engine struct {
	handler Handler
	opts    Options
	clock   loop.Clock
	loops   []*eloop
	next    atomic.Uint32
	chunks  chunkPool
	queues  queuePool
	inputs  inputPool
	queued  atomic.Int64  // output bytes queued across the engine
	over    atomic.Bool   // queued > Options.OutputBudget, as last seen
	conns   atomic.Int64  // attached connections, and those being admitted
	perIP   ipCounts      // Options.MaxConnsPerIP's counts
	hs      handshakePool // TLS handshakes
	// pooled counts the connections with callbacks on Options.Pool
	// whose OnClose has not run: the loops add, stopLoops waits.
	pooled sync.WaitGroup
	// lost counts the connections that closed with output lost during a
	// Shutdown (Conn.lost): what its error reports.
	lost atomic.Int64

	mu        sync.Mutex
	listeners []*listener
	state     int    // stateNew, stateRunning, stateStopping, stateStopped
	booted    bool   // OnBoot has returned: listeners and conns are served
	err       error  // the loop failure that stopped the engine
	held      []held // given before that, served by release
	idle      chan struct{}
	done      chan struct{}
	tick      loop.Timer
	trim      loop.Timer // the chunk, queue and input pools', on loop 0
}

const (
	stateNew = iota
	stateRunning
	stateStopping
	stateStopped
)

// New creates an engine with its loops; Listen, Dial and Adopt give it
// connections, Start runs it.
func New(h Handler, o Options) (*Engine, error) {
	if h == nil {
		return nil, errors.New("engine: nil handler")
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	e := &Engine{handler: h, opts: o, clock: o.clock, done: make(chan struct{})}
	if e.clock == nil {
		e.clock = loop.Wall
	}
	e.hs.max = o.HandshakeWorkers
	e.tick.Fire = e.onTick
	e.trim.Fire = e.trimPool
	for i := range o.Loops {
		lp := newEloop(e, i)
		l, err := loop.New(loop.Config{Provider: lp, Clock: o.clock, Flush: lp.flush, Fault: lp.fault,
			Backend: o.Backend, Open: o.open})
		if err != nil {
			e.discard()
			return nil, fmt.Errorf("engine: %w", err)
		}
		tr := l.Traits()
		lp.l, lp.batch, lp.readAhead = l, tr.Has(loop.DefersSends), tr.Has(loop.ReadsAhead)
		e.loops = append(e.loops, lp)
		l.Start()
	}
	e.loops[0].l.Post(loop.Func(func(l *loop.Loop) { l.Schedule(&e.trim, l.Now().Add(trimInterval)) }))
	return e, nil
}

// Backend returns the backend the engine was asked for, Options.Backend
// (Auto unless set), so that what serves its connections elsewhere
// (netconn.FromEngine) can ask for the same; GALE_BACKEND overrides both
// alike. Stats names the backend each loop runs.
func (e *Engine) Backend() backend.Kind { return e.opts.Backend }

// trimPool lets go of the output chunks, output queues and input buffers
// nobody used since the last trim, and comes back in a trimInterval. It
// runs on loop 0.
func (e *Engine) trimPool(now time.Time) {
	e.chunks.trim()
	e.queues.trim()
	e.inputs.trim()
	e.loops[0].l.Schedule(&e.trim, now.Add(trimInterval))
}

// discard stops loops made by a New that failed.
func (e *Engine) discard() {
	for _, lp := range e.loops {
		lp.l.Stop(nil)
	}
}

// Start runs OnBoot and the ticks, then serves the connections: those of
// listeners opened and connections dialed or adopted before Start get
// OnOpen only after OnBoot has returned. It fails once stopped.
func (e *Engine) Start() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.state != stateNew {
		return ErrEngineStopped
	}
	e.state = stateRunning
	return e.loops[0].l.Post(loop.Func(func(l *loop.Loop) {
		if e.callBoot() == Shutdown {
			e.shutdownAsync()
		} else {
			e.onTick(l.Now())
		}
		e.release()
	}))
}

func (e *Engine) onTick(now time.Time) {
	d, act := e.callTick()
	if act == Shutdown {
		e.shutdownAsync()
		return
	}
	if d > 0 {
		e.loops[0].l.Schedule(&e.tick, now.Add(d))
	}
}

// pick chooses the loop of a new connection; raddr gives its peer, which
// is asked for only by SourceHash.
func (e *Engine) pick(raddr func() net.Addr) *eloop {
	if len(e.loops) == 1 {
		return e.loops[0]
	}
	switch e.opts.Balance {
	case LeastConns:
		best := e.loops[0]
		for _, lp := range e.loops[1:] {
			if lp.assigned.Load() < best.assigned.Load() {
				best = lp
			}
		}
		return best
	case SourceHash:
		return e.loops[addrHash(raddr())%uint32(len(e.loops))]
	}
	return e.loops[e.next.Add(1)%uint32(len(e.loops))]
}

// Conns returns the number of open connections.
func (e *Engine) Conns() int { return int(e.conns.Load()) }

// signalIdle wakes a Shutdown waiting for the last connection.
func (e *Engine) signalIdle() {
	e.mu.Lock()
	if e.idle != nil {
		close(e.idle)
		e.idle = nil
	}
	e.mu.Unlock()
}

// stopping reports whether Shutdown or Stop has begun.
func (e *Engine) stopping() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state >= stateStopping
}

// overBudget reports whether the engine's queued output exceeds
// Options.OutputBudget, and whether this call saw it cross the budget,
// either way. On a crossing every other loop is asked to re-check its
// connections: going over, each one with queued output or that produced
// output pauses, not only the one whose write crossed the line; going
// back under, every connection paused for the budget reads again. The
// caller, running on cur, re-checks cur's own at once (see Conn.water).
func (e *Engine) overBudget(cur *eloop) (over, crossed bool) {
	b := e.opts.OutputBudget
	if b <= 0 {
		return false, false
	}
	over = e.queued.Load() > b
	if !e.over.CompareAndSwap(!over, over) {
		return over, false
	}
	for _, lp := range e.loops {
		if lp != cur {
			lp.l.Post(loop.Func(func(*loop.Loop) { lp.recheck(nil) }))
		}
	}
	return over, true
}

// charge records, after a Write queued output on to while the engine is
// over its budget, who produced it: when the Write comes from a callback
// of another conn, that conn stops being read until the output is back
// under budget (its water, when the callback ends). A connection fanning
// its input out to others that do not read is so held back, though it
// queues nothing of its own. Output a callback queues on its own conn is
// not charged: that conn is held only while the output is queued (water),
// so a client that reads its replies is served whatever others hold; held
// until the total fell, it waited on the clients that never read. Output
// written outside callbacks (OnTick, other goroutines) has no producer to
// hold back; MaxWriteBuffer bounds it per connection. Telling the loop
// goroutine apart costs a look at the goroutine's ID, paid only while
// over budget.
func (e *Engine) charge(to *Conn) {
	if b := e.opts.OutputBudget; b <= 0 || e.queued.Load() <= b {
		return
	}
	for _, lp := range e.loops {
		if lp.l.OnLoop() {
			if p := lp.cur; p != nil && p != to {
				p.lbits.set(bProducing, true)
			}
			return
		}
	}
}
