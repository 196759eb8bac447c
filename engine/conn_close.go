package engine

import (
	"io"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// closeGracefully closes c once its queued output is written. It runs on
// c's loop.
func (c *Conn) closeGracefully(err error) {
	if c.lbits.has(bClosed | bClosing) {
		return
	}
	c.lbits.set(bClosing, true)
	c.setCloseError(err)
	if err == nil || err == io.EOF {
		c.closeNotify() // a clean end: say so, before writes stop
	}
	// From now on Write fails (net.ErrClosed, as documented): bytes it
	// queued could otherwise slip in between the check that the queue is
	// empty and finish, which drops them after Write reported them queued.
	c.mu.Lock()
	c.mbits.set(bDead, true)
	c.mu.Unlock()
	if c.lbits.has(bReading) {
		c.lp.l.Cancel(c.tag, loop.OpRecv)
	}
	if c.drained() {
		c.finish()
	} else {
		c.flush()
	}
}

// drain closes c for a graceful Shutdown, after the handler's OnDrain if
// it is a Drainer. It runs on c's loop.
func (c *Conn) drain() {
	if t := c.tlsOf(); t != nil && !t.done {
		c.closeGracefully(nil) // no OnOpen yet: nothing to say goodbye to
		return
	}
	if d, ok := c.lp.e.handler.(Drainer); ok && !c.lbits.has(bClosed|bClosing) {
		prev := c.lp.enter(c)
		d.OnDrain(c)
		c.lp.leave(c, prev)
	}
	c.closeGracefully(nil)
}

// drained reports whether a closing c may finish: its output is written
// and, for Detach, its cancelled receive has ended. A completion backend
// may already have taken bytes from the socket for that receive; they
// reach OnData with its completion instead of vanishing with the tag.
func (c *Conn) drained() bool {
	c.mu.Lock()
	idle := c.outN() == 0 && !c.mbits.has(bSending)
	c.mu.Unlock()
	return idle && !(c.detachedTo() != nil && c.lbits.has(bReading))
}

// fail closes c at once, dropping queued output, and reports err.
func (c *Conn) fail(err error) {
	if c.lbits.has(bClosed) {
		return
	}
	c.setCloseError(err)
	c.finish()
}

// finish removes c from its loop, closes the descriptor (or hands it to
// Detach) and runs OnClose. Operations still in flight are dropped with
// the slot.
func (c *Conn) finish() {
	if c.lbits.has(bClosed) {
		return
	}
	c.lbits.set(bClosed, true)
	c.lbits.set(bClosing, false)
	c.mu.Lock()
	c.mbits.set(bDead, true)
	dropped := c.outN()
	c.releaseOutput()
	c.mu.Unlock()
	c.lp.e.queued.Add(-int64(dropped))
	c.lp.stats.queued.Add(-int64(dropped))
	if dropped > 0 {
		if _, crossed := c.lp.e.overBudget(c.lp); crossed {
			c.lp.recheck(c) // back under budget: the producers held back read again
		}
	}
	l := c.lp.l
	if t := c.timers; t != nil {
		l.Unschedule(&t.readDL)
		l.Unschedule(&t.writeDL)
		l.Unschedule(&t.idle)
	}
	if c.lbits.has(bPaused) {
		c.lbits.set(bPaused, false)
		c.lp.stats.paused.Add(-1)
	}
	if c.lbits.has(bAttached) {
		l.Release(c.tag)
		c.lp.removeConn(c)
	}
	if h := c.detachedTo(); h != nil {
		h.input = c.unconsumed()
	}
	c.in = nil
	if t := c.tlsOf(); t != nil {
		t.closed(c.closeError())
	}
	if c.laddr.Load() == nil {
		c.askLocal(c.fd.Sysfd()) // LocalAddr must answer after the close
	}
	if (c.lbits.has(bReset) || dropped > 0) && c.kind.has(kStream) && !c.kind.has(kUDP) && c.detachedTo() == nil {
		// Output was dropped: a reset tells the peer the stream was cut,
		// where an end of file would pass it for a whole one.
		sock.SetLingerZero(c.fd.Sysfd())
	}
	if h := c.detachedTo(); h != nil {
		c.fd.HandOff(h.fd)
		k := c.cold.Load()
		k.detached, k.closeErr = nil, ErrDetached
	} else {
		c.fd.Close()
	}
	err := c.closeError()
	c.lp.countClose(err)
	c.lp.e.handler.OnClose(c, err)
}
