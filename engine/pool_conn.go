package engine

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/workpool"
)

// Callbacks on a Pool (Options.Pool). The loop turns each of a
// connection's callbacks into an event in the connection's pooled queue,
// and copies its input there; a worker runs the events in order and
// brings what follows a callback's action back to the loop as a task, as
// any goroutine would. The loop never waits: it holds pooled.mu only to
// append. The worker never touches the loop's state: everything it
// decides goes through Conn's methods or a posted task.

// errPoolDetach refuses Detach of a connection on a Pool.
var errPoolDetach = fmt.Errorf("engine: detach a connection whose callbacks run on a Pool: %w", errors.ErrUnsupported)

// pevKind is the callback a pooled event runs.
type pevKind uint8

const (
	pevOpen     pevKind = iota
	pevData             // the input queued (or Wake)
	pevEOF              // the peer's end: OnEOF, then the close
	pevDeadline         // OnDeadline with err (a read or write deadline)
	pevIdle             // OnDeadline with ErrIdleTimeout, then the close
	pevDrain            // Shutdown: OnDrain, then the close
	pevClose            // OnClose with err
)

type pevent struct {
	kind pevKind
	err  error
}

// pooled is a connection's queue of callbacks for its pool: the workpool
// Job of that connection. Made with the Conn (newConn), before it is
// shared.
type pooled struct {
	c  *Conn
	wp *workpool.Pool

	mu     sync.Mutex
	evs    []pevent // waiting, in order; consecutive pevData are one
	input  *inbuf   // received and not yet taken by OnData
	queued bool     // submitted: waiting for a worker, or running
	paused bool     // the loop stopped reading at MaxQueued (bQueued)
	live   bool     // counted in Engine.pooled until OnClose ran
	ended  bool     // a Close action or a panic: no OnData, OnEOF... any more

	inCall atomic.Bool // one of c's callbacks runs (see WaitOutput)

	// Worker-owned.
	kept     *inbuf // what OnData left unconsumed
	in       Inbound
	panicErr *PanicError // the panic of the callback that returned panicked
}

// keptEvents is the capacity of the event array a connection keeps when
// its queue is empty (24 bytes an event).
const keptEvents = 4

// pooledBatch is how many callbacks of one connection a worker runs
// before the connection goes to the back of the pool's queue.
const pooledBatch = 8

// poolOf returns c's pooled queue, nil when its callbacks run on its loop
// (no Options.Pool, or a UDP socket). Safe from any goroutine.
func (c *Conn) poolOf() *pooled {
	if k := c.cold.Load(); k != nil {
		return k.pool
	}
	return nil
}

// push queues the event ev for c's pool. Loop goroutine.
func (pc *pooled) push(ev pevent) {
	pc.mu.Lock()
	pc.add(ev)
	pc.mu.Unlock()
	pc.submit()
}

// add appends ev, pc.mu held.
func (pc *pooled) add(ev pevent) {
	if !pc.live {
		pc.live = true
		pc.c.lp.e.pooled.Add(1) // the loop adds; stopLoops waits after the loops ended
	}
	if ev.kind == pevData && len(pc.evs) > 0 && pc.evs[len(pc.evs)-1].kind == pevData {
		return // one OnData will have both
	}
	pc.evs = append(pc.evs, ev)
}

// submit hands pc to its pool unless it is there already.
func (pc *pooled) submit() {
	pc.mu.Lock()
	start := !pc.queued && len(pc.evs) > 0
	pc.queued = pc.queued || start
	pc.mu.Unlock()
	if start {
		pc.wp.Submit(pc)
	}
}

// pushData queues data (nil for Wake) with what c kept before (adopted
// input), and stops reading c once MaxQueued bytes wait. Loop goroutine.
func (pc *pooled) pushData(data []byte, kept **inbuf) {
	c := pc.c
	inputs := &c.lp.e.inputs
	pc.mu.Lock()
	if k := *kept; k != nil {
		pc.input = inputs.append(pc.input, k.bytes())
		inputs.put(k)
		*kept = nil
	}
	pc.input = inputs.append(pc.input, data)
	full := len(pc.input.bytes()) >= pc.wp.MaxQueued
	pc.paused = pc.paused || full
	pc.add(pevent{kind: pevData})
	pc.mu.Unlock()
	if full {
		c.lbits.set(bQueued, true) // a worker's take posts poolResume
	}
	pc.submit()
}

// poolResume lifts bQueued once a worker took c's queued input: the
// Conn under another type, so posting it allocates nothing.
type poolResume Conn

func (t *poolResume) Run(*loop.Loop) {
	c := (*Conn)(t)
	if pc := c.poolOf(); pc != nil {
		pc.mu.Lock()
		again := pc.paused // the queue filled again since the take
		pc.mu.Unlock()
		if again {
			return
		}
	}
	c.unqueue()
}

// unqueue lifts bQueued. It runs on c's loop.
func (c *Conn) unqueue() {
	if c.lbits.has(bQueued) {
		c.lbits.set(bQueued, false)
		c.startRead()
	}
}

// Run runs up to pooledBatch of c's callbacks (workpool.Job). Worker.
func (pc *pooled) Run() bool {
	for range pooledBatch {
		pc.mu.Lock()
		if len(pc.evs) == 0 {
			pc.queued = false
			pc.mu.Unlock()
			return false
		}
		ev := pc.evs[0]
		pc.evs = pc.evs[:copy(pc.evs, pc.evs[1:])] // a few events at most: data coalesces
		pc.evs[:cap(pc.evs)][len(pc.evs)] = pevent{}
		if len(pc.evs) == 0 && cap(pc.evs) > keptEvents {
			pc.evs = nil // a burst's array goes; a small one stays, so a steady load allocates nothing
		}
		resume := false
		if ev.kind == pevData {
			pc.take()
			resume, pc.paused = pc.paused, false
		}
		ended := pc.ended
		pc.mu.Unlock()
		if resume {
			pc.c.post((*poolResume)(pc.c))
		}
		if ended && ev.kind != pevClose {
			continue
		}
		pc.run(ev)
	}
	pc.mu.Lock()
	more := len(pc.evs) > 0
	pc.queued = more
	pc.mu.Unlock()
	return more
}

// take moves the queued input behind what OnData left. pc.mu is held.
func (pc *pooled) take() {
	inputs := &pc.c.lp.e.inputs
	switch {
	case pc.input == nil:
	case pc.kept == nil:
		pc.kept, pc.input = pc.input, nil
	default:
		pc.kept = inputs.append(pc.kept, pc.input.bytes())
		inputs.put(pc.input)
		pc.input = nil
	}
}

// run runs the callback of ev, then brings the action's consequences to
// c's loop. Worker.
func (pc *pooled) run(ev pevent) {
	c := pc.c
	h := c.lp.e.handler
	switch ev.kind {
	case pevOpen:
		var out []byte
		act := pc.call("OnOpen", func() Action {
			var a Action
			out, a = h.OnOpen(c)
			return a
		})
		if len(out) > 0 && act != panicked {
			c.Write(out)
		}
		pc.act(act)
	case pevData:
		pc.data()
	case pevEOF:
		act := Close
		if hc, ok := h.(HalfCloser); ok {
			act = pc.call("OnEOF", func() Action { return hc.OnEOF(c) })
		}
		switch act {
		case None:
		case panicked:
			pc.act(act)
		default:
			if act == Shutdown {
				c.lp.e.shutdownAsync()
			}
			pc.end()
			c.post(loop.Func(func(*loop.Loop) { c.closeGracefully(c.eofError()) }))
		}
	case pevDeadline:
		act := pc.call("OnDeadline", func() Action { return h.OnDeadline(c, ev.err) })
		if c.lp.e.opts.CloseOnDeadline && act != panicked {
			pc.end()
			c.post(loop.Func(func(*loop.Loop) { c.fail(ev.err) }))
			return
		}
		pc.act(act)
	case pevIdle:
		act := pc.call("OnDeadline", func() Action { return h.OnDeadline(c, ErrIdleTimeout) })
		if act == panicked {
			pc.act(act)
			return
		}
		if act == Shutdown {
			c.lp.e.shutdownAsync()
		}
		pc.end()
		c.post(loop.Func(func(*loop.Loop) { c.idleClose() }))
	case pevDrain:
		act := None
		if d, ok := h.(Drainer); ok {
			act = pc.call("OnDrain", func() Action { d.OnDrain(c); return None })
		}
		if act == panicked {
			pc.act(act)
			return
		}
		pc.end()
		c.post(loop.Func(func(*loop.Loop) { c.closeGracefully(nil) }))
	case pevClose:
		pc.call("OnClose", func() Action { h.OnClose(c, ev.err); return None })
		pc.closed()
	}
}

// data runs OnData with the input kept and taken. Worker.
func (pc *pooled) data() {
	c := pc.c
	in := &pc.in
	in.buf, in.pc = pc.kept.bytes(), pc
	act := pc.call("OnData", func() Action { return c.lp.e.handler.OnData(c, in) })
	rest := in.buf
	in.buf, in.pc = nil, nil
	inputs := &c.lp.e.inputs
	if act == panicked {
		rest = nil
	}
	if len(rest) > c.lp.e.opts.MaxInputBuffer {
		inputs.keep(&pc.kept, nil, true)
		pc.limit(ErrInputBufferFull)
		return
	}
	if pc.kept != nil {
		inputs.keep(&pc.kept, rest, true)
	}
	pc.act(act)
}

// limit closes c for the limit err, after a LimitHandler's OnLimit.
// Worker.
func (pc *pooled) limit(err error) {
	c := pc.c
	if lh, ok := c.lp.e.handler.(LimitHandler); ok {
		if pc.call("OnLimit", func() Action { lh.OnLimit(c, err); return None }) == panicked {
			pc.act(panicked)
			return
		}
	}
	pc.end()
	c.post(loop.Func(func(*loop.Loop) { c.closeGracefully(err) })) // finish counts it
}

// end stops the delivery of c's events but OnClose. Worker.
func (pc *pooled) end() {
	pc.mu.Lock()
	pc.ended = true
	pc.mu.Unlock()
}

// act carries out a pooled callback's action: on c's loop, as Conn.Close
// would (after the output the callback wrote). Worker.
func (pc *pooled) act(a Action) {
	c := pc.c
	switch a {
	case None:
	case panicked:
		pc.end()
		err := pc.panicErr
		pc.panicErr = nil
		c.post(loop.Func(func(*loop.Loop) {
			if !c.lbits.has(bClosed) {
				c.lbits.set(bReset, true)
				c.fail(err)
			}
		}))
	case Shutdown:
		c.lp.e.shutdownAsync()
	default: // Close, and what no Action names
		pc.end()
		c.Close()
	}
}

// closed ends pc after OnClose: its buffers go back, and the engine's
// stop may go on. Worker.
func (pc *pooled) closed() {
	inputs := &pc.c.lp.e.inputs
	pc.mu.Lock()
	if pc.input != nil {
		inputs.put(pc.input)
		pc.input = nil
	}
	live := pc.live
	pc.live = false
	pc.mu.Unlock()
	if pc.kept != nil {
		inputs.put(pc.kept)
		pc.kept = nil
	}
	if live {
		pc.c.lp.e.pooled.Done()
	}
}

// call runs the callback f, named cb, containing its panic as the loop's
// callers do (eloop.contain): logged, and reported as panicked with the
// error in pc.in.panicErr. Worker.
func (pc *pooled) call(cb string, f func() Action) (act Action) {
	pc.inCall.Store(true)
	defer pc.inCall.Store(false)
	defer pc.contain(cb, &act)
	return f()
}

func (pc *pooled) contain(cb string, act *Action) {
	e := pc.c.lp.e
	if e.opts.CrashOnPanic {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	err := &PanicError{Value: v, Stack: debug.Stack(), in: cb}
	e.logf("engine: panic in %s serving %v: %v\n%s", cb, pc.c.RemoteAddr(), v, err.Stack)
	if cb != "OnClose" {
		pc.panicErr = err
		*act = panicked
	}
}
