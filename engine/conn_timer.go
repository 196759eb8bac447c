package engine

import (
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/loop"
)

// SetDeadline sets the read and write deadlines: see SetReadDeadline and
// SetWriteDeadline.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline bounds the wait for the input c's handler waits for, as
// a net.Conn's read deadline bounds a blocked Read: unless, before t,
// bytes arrive and OnData consumes every byte it has, OnDeadline runs at t
// with ErrReadDeadline (which matches os.ErrDeadlineExceeded). Consumed
// input meets the deadline, which is then cleared; input left unconsumed
// (a partial frame the handler waits to complete) does not. A zero t
// cancels it. The timer belongs to c's loop: no runtime timer is made.
// A closing c's read deadline bounds its close until its output is
// written; its linger then has its own bound (Options.CloseLinger).
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.post(loop.Func(func(l *loop.Loop) {
		if !c.lbits.has(bLinger) {
			c.setTimer(l, func(ts *connTimers) *loop.Timer { return &ts.readDL }, t)
		}
	}))
}

// SetWriteDeadline bounds c's writes, as a net.Conn's write deadline
// does: if output is still queued at t, OnDeadline runs with
// ErrWriteDeadline, and a Write made after t fails with ErrWriteDeadline
// and writes nothing, until the deadline is moved. A zero t cancels it.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	if !t.IsZero() && c.q == nil {
		c.q = c.lp.e.queues.get()
	}
	if c.q != nil {
		c.q.writeBy = t
		c.putQueue() // an idle queue kept only for the deadline
	}
	c.mu.Unlock()
	return c.post(loop.Func(func(l *loop.Loop) { c.setTimer(l, func(ts *connTimers) *loop.Timer { return &ts.writeDL }, t) }))
}

// connTimers are a connection's loop timers, allocated when it first
// needs one (at once with an idle timeout, and when it lingers). While c
// closes, readDL is the linger's bound (see Conn.written).
type connTimers struct {
	readDL, writeDL, idle loop.Timer
	lastActive            atomic.Int64 // unix nanoseconds of the last read or write
	readAt                int64        // unix nanoseconds of the last read; loop goroutine only
	dropped               int          // bytes a closing c read and dropped (dropInput); loop goroutine only
}

func newConnTimers(c *Conn) *connTimers {
	ts := &connTimers{}
	ts.readDL.Fire = c.readDeadline
	ts.writeDL.Fire = c.writeDeadline
	ts.idle.Fire = c.idleCheck
	return ts
}

// setTimer sets or, for a zero t, cancels the timer which picks from
// c's timers. It runs on c's loop.
func (c *Conn) setTimer(l *loop.Loop, which func(*connTimers) *loop.Timer, t time.Time) {
	if c.lbits.has(bClosed) {
		return
	}
	if c.timers == nil {
		if t.IsZero() {
			return
		}
		c.timers = newConnTimers(c)
	}
	tm := which(c.timers)
	if t.IsZero() {
		l.Unschedule(tm)
		c.dropTimers()
		return
	}
	l.Schedule(tm, t)
}

// dropTimers frees c's timers once none is armed, unless idle timeouts
// keep them (touch reads them from any goroutine then): a connection
// whose deadlines served a phase (an HTTP head, then an upgrade) does not
// keep their 144 bytes for the rest of its life. A closing c keeps them:
// they count what it dropped. Loop goroutine only.
func (c *Conn) dropTimers() {
	ts := c.timers
	if ts != nil && !c.lp.e.opts.idling() && !ts.readDL.Scheduled() && !ts.writeDL.Scheduled() && !c.lbits.has(bClosing) {
		c.timers = nil
	}
}

func (c *Conn) readDeadline(time.Time) {
	if c.lbits.has(bLinger) {
		c.finish() // the linger's bound: the peer did not end in time
		return
	}
	c.deadline(ErrReadDeadline)
}

func (c *Conn) writeDeadline(time.Time) {
	if c.OutboundBuffered() > 0 {
		c.deadline(ErrWriteDeadline)
	}
}

func (c *Conn) deadline(err error) {
	c.lp.stats.ev.countDeadline(err)
	if pc := c.poolOf(); pc != nil {
		pc.push(pevent{kind: pevDeadline, err: err})
		return
	}
	prev := c.lp.enter(c)
	act := c.callDeadline(err)
	c.lp.leave(c, prev)
	if c.lp.e.opts.CloseOnDeadline && act != panicked {
		c.fail(err)
		return
	}
	c.act(act)
}

// idleCheck ends c if it has been idle for Options.IdleTimeout (no read
// or write) or Options.ReadIdleTimeout (no read), or checks again when it
// would be. A closing c is cut once its output stalled for idleBound.
func (c *Conn) idleCheck(now time.Time) {
	o, ts := &c.lp.e.opts, c.timers
	active := time.Unix(0, ts.lastActive.Load())
	if c.lbits.has(bLinger) {
		return // the output is written; the linger's own bound ends it
	}
	if c.lbits.has(bClosing) {
		if due := active.Add(o.idleBound()); due.After(now) {
			c.lp.l.Schedule(&ts.idle, due)
			return
		}
		c.fail(ErrIdleTimeout)
		return
	}
	var due time.Time
	for _, t := range [2]struct {
		d    time.Duration
		from time.Time
	}{{o.IdleTimeout, active}, {o.ReadIdleTimeout, time.Unix(0, ts.readAt)}} {
		if t.d <= 0 {
			continue
		}
		if at := t.from.Add(t.d); !at.After(now) {
			c.idle(now, active)
			return
		} else if due.IsZero() || at.Before(due) {
			due = at
		}
	}
	c.lp.l.Schedule(&ts.idle, due)
}

// idle ends an idle c: OnDeadline may say goodbye, then c closes after its
// queued output, or at once if that output has stalled (nothing moved
// since active, idleBound ago): the goodbye could not get out.
func (c *Conn) idle(now, active time.Time) {
	if t := c.tlsOf(); t != nil && !t.done {
		c.fail(ErrIdleTimeout) // mid-handshake: no OnOpen, so no goodbye
		return
	}
	if pc := c.poolOf(); pc != nil {
		pc.push(pevent{kind: pevIdle}) // the worker posts idleClose after OnDeadline
		return
	}
	bound := c.lp.e.opts.idleBound()
	stalled := c.OutboundBuffered() > 0 && !active.Add(bound).After(now)
	prev := c.lp.enter(c)
	act := c.callDeadline(ErrIdleTimeout)
	c.lp.leave(c, prev)
	if act == panicked {
		c.act(act)
		return
	}
	if act == Shutdown {
		c.lp.e.shutdownAsync()
	}
	if stalled {
		c.fail(ErrIdleTimeout)
		return
	}
	c.closeGracefully(ErrIdleTimeout)
	if !c.lbits.has(bClosed) {
		c.lp.l.Schedule(&c.timers.idle, now.Add(bound)) // cut the drain if it stalls
	}
}

// idleClose closes an idle c once its pooled OnDeadline said goodbye, as
// idle does after an OnDeadline on the loop. It runs on c's loop.
func (c *Conn) idleClose() {
	if c.lbits.has(bClosed | bClosing) {
		return
	}
	now := c.lp.l.Now()
	bound := c.lp.e.opts.idleBound()
	active := time.Unix(0, c.timers.lastActive.Load())
	if c.OutboundBuffered() > 0 && !active.Add(bound).After(now) {
		c.fail(ErrIdleTimeout) // the output stalled: the goodbye cannot get out
		return
	}
	c.closeGracefully(ErrIdleTimeout)
	if !c.lbits.has(bClosed) {
		c.lp.l.Schedule(&c.timers.idle, now.Add(bound)) // cut the drain if it stalls
	}
}
