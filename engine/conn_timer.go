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

// SetReadDeadline arranges for OnDeadline to run at t with an error
// matching os.ErrDeadlineExceeded; a zero t cancels it. The timer belongs
// to c's loop: no runtime timer is made.
func (c *Conn) SetReadDeadline(t time.Time) error {
	return c.post(loop.Func(func(l *loop.Loop) { c.setTimer(l, func(ts *connTimers) *loop.Timer { return &ts.readDL }, t) }))
}

// SetWriteDeadline arranges for OnDeadline to run at t if output is still
// queued then; a zero t cancels it.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.post(loop.Func(func(l *loop.Loop) { c.setTimer(l, func(ts *connTimers) *loop.Timer { return &ts.writeDL }, t) }))
}

// connTimers are a connection's loop timers, allocated when it first
// needs one (at once with Options.IdleTimeout).
type connTimers struct {
	readDL, writeDL, idle loop.Timer
	lastActive            atomic.Int64 // unix nanoseconds of the last read or write
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
	if c.closed {
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
		return
	}
	l.Schedule(tm, t)
}

func (c *Conn) readDeadline(time.Time) { c.deadline(errReadDeadline) }

func (c *Conn) writeDeadline(time.Time) {
	if c.OutboundBuffered() > 0 {
		c.deadline(errWriteDeadline)
	}
}

func (c *Conn) deadline(err error) {
	prev := c.lp.enter(c)
	act := c.lp.e.handler.OnDeadline(c, err)
	c.lp.leave(c, prev)
	if c.lp.e.opts.CloseOnDeadline {
		c.fail(err)
		return
	}
	c.act(act)
}

// idleCheck closes c if it has been idle for Options.IdleTimeout, or
// checks again when it would be.
func (c *Conn) idleCheck(now time.Time) {
	last := time.Unix(0, c.timers.lastActive.Load())
	if due := last.Add(c.lp.e.opts.IdleTimeout); due.After(now) {
		c.lp.l.Schedule(&c.timers.idle, due)
		return
	}
	c.fail(errIdle)
}
