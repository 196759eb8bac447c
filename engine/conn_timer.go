package engine

import (
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
	return c.post(loop.Func(func(l *loop.Loop) { c.setTimer(l, &c.readDL, t) }))
}

// SetWriteDeadline arranges for OnDeadline to run at t if output is still
// queued then; a zero t cancels it.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	return c.post(loop.Func(func(l *loop.Loop) { c.setTimer(l, &c.writeDL, t) }))
}

func (c *Conn) setTimer(l *loop.Loop, tm *loop.Timer, t time.Time) {
	if c.closed {
		return
	}
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
	act := c.e.handler.OnDeadline(c, err)
	if c.e.opts.CloseOnDeadline {
		c.fail(err)
		return
	}
	c.act(act)
}

// idleCheck closes c if it has been idle for Options.IdleTimeout, or
// checks again when it would be.
func (c *Conn) idleCheck(now time.Time) {
	last := time.Unix(0, c.lastActive.Load())
	if due := last.Add(c.e.opts.IdleTimeout); due.After(now) {
		c.lp.l.Schedule(&c.idle, due)
		return
	}
	c.fail(errIdle)
}
