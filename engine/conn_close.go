package engine

import (
	"io"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// closeGracefully closes c once its queued output is written, then, on a
// stream, after its linger (see written). From now on the handler gets no
// input: a stream that lingers reads on and drops what it reads, so that
// no byte its peer sends meanwhile is left unread at the close, and others
// stop reading. It runs on c's loop.
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
	switch {
	case c.lingers():
		// A read deadline stays: a protocol may bound its close with
		// one (a WebSocket close handshake), until the linger's own.
		c.startRead() // drops what comes (dropInput)
	case c.lbits.has(bReading):
		c.lp.l.Cancel(c.tag, loop.OpRecv)
	}
	if c.drained() {
		c.written()
	} else {
		c.flush()
	}
}

// lingers reports whether c, closing, shuts its sending side down once
// its output is written and waits for its peer's end, dropping the input
// meanwhile: a stream, unless it is being detached (the new owner reads
// on), its TLS handshake has not ended (no OnOpen: nothing was said), or
// Options.CloseLinger is negative.
func (c *Conn) lingers() bool {
	if !c.closesStream() || c.lp.e.opts.CloseLinger < 0 {
		return false
	}
	t := c.tlsOf()
	return t == nil || t.done
}

// written goes on with closing c once its output is written. Closed now,
// with bytes of its peer unread, the socket would be reset (RFC 2525
// §2.17): the kernel drops what it has not sent yet, and the peer reads
// an error after what it had. So, as net/http's
// closeWriteAndWait does, c shuts its sending side down, and the peer
// reads the end of the stream after the last byte; then c lingers: it
// reads and drops until the peer's end (dropInput), Options.CloseLinger
// or lingerMax bytes, and closes. A c whose peer had ended, that does
// not linger, or whose peer has all it wrote (peerHasAll) closes at once.
// It runs on c's loop.
func (c *Conn) written() {
	if !c.lingers() || c.lbits.has(bEOF) || c.peerHasAll() {
		c.finish()
		return
	}
	if !c.lbits.has(bWrShut) {
		c.lbits.set(bWrShut, true)
		if sock.Shutdown(c.fd.Sysfd(), sock.ShutWrite) != nil {
			c.finish() // ENOTCONN: the peer is gone, there is no one to wait for
			return
		}
	}
	c.lbits.set(bLinger, true)
	if c.timers == nil {
		c.timers = newConnTimers(c)
	}
	l := c.lp.l
	l.Schedule(&c.timers.readDL, l.Now().Add(c.lp.e.opts.CloseLinger)) // readDeadline ends the linger
	c.startRead()
}

// peerHasAll reports whether c's kernel holds none of its peer's bytes
// unread and none of its own not yet taken by the peer (acknowledged, on
// TCP): a close now ends the stream with no reset and nothing to lose,
// and c need not linger (an idle connection that Shutdown closes, say).
// A peer that sends after that is reset, having what c wrote. It runs
// on c's loop.
func (c *Conn) peerHasAll() bool {
	in, out, ok := c.kernelQueues()
	return ok && in == 0 && out == 0
}

// dropInput handles a receive of a closing c: its handler waits for no
// more input, so the bytes are dropped, and c reads on until its peer's
// end (see written). A read that fails ends a lingering c, whose output
// is written, as the peer's end does; before that it drops the output
// as a failed send would. It runs on c's loop.
func (c *Conn) dropInput(p loop.Completion) {
	switch {
	case p.Canceled():
	case p.Errno() != 0 && !c.lbits.has(bLinger):
		c.fail(c.opError("read", p.Errno()))
		return
	case p.Errno() != 0 || p.N() == 0:
		c.lbits.set(bEOF, true) // no more input either way
		if c.lbits.has(bLinger) {
			c.finish()
		}
		return
	default:
		c.lp.stats.bytesIn.Add(uint64(p.N()))
		if c.timers == nil {
			c.timers = newConnTimers(c)
		}
		c.timers.dropped += p.N()
	}
	c.startRead()
}

// startDrop submits a receive for a closing c that lingers, unless one is
// in flight, its peer has ended, or c has dropped lingerMax bytes
// (backpressure and PauseRead no longer hold it: what it reads is
// dropped).
func (c *Conn) startDrop() {
	if c.lbits.has(bReading|bEOF|bClosed) || c.lp.dead || !c.lingers() ||
		(c.timers != nil && c.timers.dropped >= lingerMax) {
		return
	}
	c.lbits.set(bReading, true)
	c.lbits.set(bReadAhead, c.lp.readAhead)
	c.lp.l.Recv(c.tag, nil)
}

// drain closes c for a graceful Shutdown, after the handler's OnDrain if
// it is a Drainer. It runs on c's loop.
func (c *Conn) drain() {
	if t := c.tlsOf(); t != nil && !t.done {
		c.closeGracefully(nil) // no OnOpen yet: nothing to say goodbye to
		return
	}
	if pc := c.poolOf(); pc != nil && !c.lbits.has(bClosed|bClosing) {
		pc.push(pevent{kind: pevDrain}) // the worker closes c after OnDrain
		return
	}
	if d, ok := c.lp.e.handler.(Drainer); ok && !c.lbits.has(bClosed|bClosing) {
		prev := c.lp.enter(c)
		act := c.callDrain(d)
		c.lp.leave(c, prev)
		c.act(act)
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
	if w := c.proxyOf(); w != nil {
		l.Unschedule(&w.timer)
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
	if c.lp.draining && c.lost(dropped) {
		c.lp.e.lost.Add(1) // Shutdown reports it
	}
	if (c.lbits.has(bReset) || dropped > 0) && c.closesStream() {
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
	c.callClose(err)
}

// lost reports whether closing c now, with dropped bytes of output
// dropped, may lose output its peer is owed: output dropped; a reset
// Abort asked for; or a close with the peer's bytes unread, which the
// kernel turns into a reset (RFC 2525 §2.17), while output c wrote is
// not yet acknowledged (TCP: the reset discards it) or read (Unix: the
// peer reads it, then the reset's error). The TLS close_notify record,
// written last, is not owed: a peer may close without waiting for it
// (RFC 8446 §6.1), and one that closed as Shutdown wrote it resets the
// connection with the record unacknowledged. Where the kernel does not
// say, a lingering c whose peer has not ended is counted. It runs on c's
// loop, in finish.
func (c *Conn) lost(dropped int) bool {
	switch {
	case dropped > 0 || c.lbits.has(bReset):
		return true
	case !c.closesStream() || c.lbits.has(bEOF):
		return false
	}
	in, out, ok := c.kernelQueues()
	if !ok {
		return c.lbits.has(bLinger)
	}
	// A reset, with output in flight beyond the alert (out < 0: unknown).
	return in > 0 && (out < 0 || out > c.alertBytes())
}

// closesStream reports whether c's close ends a TCP or Unix stream of its
// own: not a datagram socket, nor one being detached (its descriptor goes
// on).
func (c *Conn) closesStream() bool {
	return c.kind.has(kStream) && !c.kind.has(kUDP) && c.detachedTo() == nil
}

// kernelQueues returns how many bytes of c's peer its socket holds unread,
// and how many of c's own its peer has not taken (-1 if the kernel does
// not say); ok is false if the kernel does not say what is unread.
func (c *Conn) kernelQueues() (in, out int, ok bool) {
	fd := c.fd.Sysfd()
	if in, ok = sock.Unread(fd); !ok {
		return 0, 0, false
	}
	if out, known := sock.Unacked(fd); known {
		return in, out, true
	}
	return in, -1, true
}
