package engine

import (
	"io"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// attach puts c on its loop: registers the descriptor, runs OnOpen and
// starts reading. It runs on c's loop.
func (c *Conn) attach(l *loop.Loop) {
	if c.lp.dead {
		c.discard() // the loop failed before c reached it
		return
	}
	if c.kind.has(kCapped) {
		c.lp.stats.accepted.Add(1)
	}
	if err := c.admit(); err != nil {
		c.refuse(err)
		return
	}
	tag, err := l.Attach(c.fd.Sysfd(), c.kind.has(kStream), (*connOwner)(c))
	if err != nil {
		c.releasePeer()
		c.lp.e.dropConn()
		c.mu.Lock()
		c.mbits.set(bDead, true) // no Write may touch the descriptor now
		c.mu.Unlock()
		c.lp.unassign()
		c.fd.Close()
		c.lbits.set(bClosed, true)
		c.callClose(c.opError("attach", err))
		return
	}
	c.tag = tag
	c.lbits.set(bAttached, true)
	c.lp.addConn(c)
	if d := c.lp.e.opts.TCPKeepAlive; d != 0 && c.kind.has(kStream) && !c.kind.has(kUDP) && isTCP(c.network()) {
		sock.SetKeepAlive(c.fd.Sysfd(), d) // best effort, as in package net
	}
	c.touch()
	if o := &c.lp.e.opts; o.idling() && !c.kind.has(kUDP) {
		c.timers.readAt = l.Now().UnixNano()
		l.Schedule(&c.timers.idle, l.Now().Add(o.idleBound()))
	}
	if w := c.proxyOf(); w != nil {
		c.beginProxy(l, w) // opened runs when the header came
		return
	}
	c.opened(nil)
}

// open runs OnOpen for c, attached, then serves it: the input adopted with
// it first, then what it receives.
func (c *Conn) open() {
	act := None
	if pc := c.poolOf(); pc != nil {
		pc.push(pevent{kind: pevOpen})
	} else {
		prev := c.lp.enter(c)
		var out []byte
		out, act = c.callOpen()
		c.lp.leave(c, prev)
		if len(out) > 0 {
			c.Write(out)
		}
	}
	switch {
	case !c.act(act):
	case c.lp.draining:
		c.drain() // Shutdown has begun: serve nothing new
	default:
		c.flush()
		switch {
		case c.kind.has(kTLS):
			c.pumpTLS() // records that came with the handshake's last
			c.flush()
		case len(c.in.bytes()) > 0:
			c.deliver(nil) // input read before AdoptInput: OnData's first
			c.flush()
		}
		c.startRead()
	}
}

// startRead submits a receive unless one is in flight or reading stopped;
// for a closing c, one that drops what it reads (startDrop).
func (c *Conn) startRead() {
	if c.lbits.has(bClosing) && !c.lbits.has(bClosed) && c.detachedTo() == nil {
		c.startDrop()
		return
	}
	if c.lbits.has(bReading|bPaused|bHeld|bQueued|bEOF|bClosing|bClosed) || c.lp.dead || c.tlsHeld() {
		return
	}
	c.lbits.set(bReading, true)
	if c.kind.has(kUDP) {
		c.lp.l.RecvFrom(c.tag, c.udpOf().buf)
		return
	}
	c.lbits.set(bReadAhead, c.lp.readAhead)
	c.lp.l.Recv(c.tag, nil)
}

// connOwner is the loop's Owner for a Conn: the Conn itself under another
// type, so that Complete stays out of Conn's methods.
type connOwner Conn

// Complete handles the completions of c's operations.
func (o *connOwner) Complete(l *loop.Loop, p loop.Completion) {
	c := (*Conn)(o)
	switch p.Op() {
	case loop.OpSend:
		c.sent(p)
	case loop.OpRecv, loop.OpRecvFrom:
		c.lbits.set(bReading, false)
		c.received(p)
	}
}

func (c *Conn) received(p loop.Completion) {
	switch {
	case c.lbits.has(bClosed):
		return // the bytes are dropped with the connection
	case c.lbits.has(bClosing) && c.detachedTo() == nil:
		c.dropInput(p)
		return
	case p.Canceled():
	case p.Errno() != 0:
		c.fail(c.opError("read", p.Errno()))
		return
	case p.N() == 0 && c.kind.has(kStream):
		c.peerClosed()
		return
	default:
		c.lp.stats.bytesIn.Add(uint64(p.N()))
		c.touchDone()
		if ts := c.timers; ts != nil {
			ts.readAt = c.lp.l.Now().UnixNano()
		}
		if from := p.From(); from != nil {
			c.lp.in.from = sock.Addr(c.network(), from)
		}
		if w := c.proxyOf(); w != nil {
			c.feedProxy(w, p.Bytes())
		} else {
			c.deliver(p.Bytes())
		}
		c.lp.in.from = nil
		if ts := c.timers; ts != nil && !c.lbits.has(bClosing) && !c.waitsForInput() {
			// The handler took all it was given: the read the deadline
			// bounded is done. Bytes left unconsumed (a partial frame)
			// mean it still waits, and the deadline stays. (A closing
			// c's timer bounds its linger: see written.)
			c.lp.l.Unschedule(&ts.readDL)
			c.dropTimers()
		}
	}
	if c.lbits.has(bClosing) && c.detachedTo() != nil && c.drained() {
		c.finish() // the cancelled receive of a Detach has ended
		return
	}
	c.flush()
	c.startRead()
}

// deliver runs OnData with the unconsumed input followed by data (which
// lives in the loop's read buffer), then keeps what was not consumed. On
// a TLS connection data is records, which deliverTLS decrypts first.
func (c *Conn) deliver(data []byte) {
	if c.kind.has(kTLS) {
		c.deliverTLS(data)
		return
	}
	c.onData(data, &c.in)
}

// onData runs OnData with the bytes kept in *kept followed by data, then
// keeps in *kept what was not consumed.
func (c *Conn) onData(data []byte, kept **inbuf) {
	if pc := c.poolOf(); pc != nil {
		pc.pushData(data, kept)
		return
	}
	in := &c.lp.in
	owned := len((*kept).bytes()) > 0 || data == nil
	if owned {
		*kept = c.lp.e.inputs.append(*kept, data)
		in.buf = (*kept).bytes()
	} else {
		in.buf = data
	}
	if c.lp.batch {
		c.setBatching(true)
	}
	in.c = c
	prev := c.lp.enter(c)
	act := c.callData(in)
	c.lp.leave(c, prev)
	if act == panicked && c.kind.has(kUDP) {
		// A UDP socket serves every peer: the panic loses the datagram
		// only, or one datagram could stop the service.
		c.lp.panicErr = nil
		act = None
	}
	in.c = nil
	if c.lp.batch {
		c.setBatching(false)
		if act != panicked {
			c.flush() // send the batch
		}
	}
	rest := in.buf
	in.buf = nil
	if c.kind.has(kUDP) || c.lbits.has(bClosed) || act == panicked {
		rest = nil // a datagram's unconsumed bytes are not kept, nor a closed conn's
	}
	// Past the cap c fails, unless it is being detached: the hand-over
	// takes every byte, and the new owner sets its own bounds.
	if len(rest) > c.lp.e.opts.MaxInputBuffer && c.detachedTo() == nil {
		*kept = nil // dropped: c closes
		c.overLimit(ErrInputBufferFull)
		return
	}
	c.lp.e.inputs.keep(kept, rest, owned)
	c.act(act)
}

// waitsForInput reports whether c holds input its handler has not
// consumed (a partial frame, or a partial TLS record).
func (c *Conn) waitsForInput() bool {
	if len(c.in.bytes()) > 0 {
		return true
	}
	t := c.tlsOf()
	return t != nil && len(t.plain.bytes()) > 0
}

// setBatching turns write batching on or off for c (see eloop.batch).
func (c *Conn) setBatching(on bool) {
	c.mu.Lock()
	c.mbits.set(bBatching, on)
	c.mu.Unlock()
}

// act carries out a callback's action and reports whether c is still
// open.
func (c *Conn) act(a Action) bool {
	switch a {
	case panicked:
		c.resetPanicked()
	case Close:
		c.closeGracefully(nil)
	case Shutdown:
		c.lp.e.shutdownAsync()
	}
	return !c.lbits.has(bClosed | bClosing)
}

// peerClosed handles end of file: the peer will send nothing more. What is
// queued is still written, then the connection closes with io.EOF.
func (c *Conn) peerClosed() {
	c.lbits.set(bEOF, true)
	if c.proxyOf() != nil {
		c.closeGracefully(c.eofError()) // no header, no OnOpen: nothing to say
		return
	}
	if t := c.tlsOf(); t != nil && t.handshaking() {
		// A worker has the handshake: it reads the end of the stream
		// after the bytes before it, and its result closes c with
		// crypto/tls's reason (a refusal it sent, say), not a bare EOF.
		t.tr.CloseWith(io.ErrUnexpectedEOF)
		return
	}
	if pc := c.poolOf(); pc != nil {
		pc.push(pevent{kind: pevEOF}) // the worker closes c after OnData had all
		return
	}
	if hc, ok := c.lp.e.handler.(HalfCloser); ok && !c.kind.has(kUDP) {
		prev := c.lp.enter(c)
		act := c.callEOF(hc)
		c.lp.leave(c, prev)
		if act == None || act == panicked {
			c.act(act)
			return
		}
		if act == Shutdown {
			c.lp.e.shutdownAsync()
		}
	}
	c.closeGracefully(c.eofError())
}

func isTCP(network string) bool {
	return network == "tcp" || network == "tcp4" || network == "tcp6"
}

// overLimit closes c for the limit err: after the handler's OnLimit, if
// it is a LimitHandler, gracefully, so that the replies queued before and
// what OnLimit wrote reach the peer. It runs on c's loop.
func (c *Conn) overLimit(err error) {
	if lh, ok := c.lp.e.handler.(LimitHandler); ok && !c.lbits.has(bClosed|bClosing) {
		prev := c.lp.enter(c)
		act := c.callLimit(lh, err)
		c.lp.leave(c, prev)
		c.act(act)
	}
	c.closeGracefully(err)
}
