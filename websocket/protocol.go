package websocket

import (
	"errors"
	"io"
	"net"

	"github.com/galeio/gale/engine"
)

// protocol is a Conn seen as the loop's callbacks: httpd.Protocol for a
// connection upgraded on gale's HTTP server, and what engineHandler calls
// for the connections of NewEngine's engines. The methods run on the
// connection's loop.
type protocol Conn

// OnOpen runs the handler's OnOpen (a client's, once its handshake ended).
func (p *protocol) OnOpen(ec *engine.Conn) {
	c := (*Conn)(p)
	c.ecp.Store(ec)
	if hs := c.handshake(); hs != nil {
		hs.begin(c)
		return
	}
	defer ec.Recover(c.panickedOpen)
	if c.park() {
		return // its callbacks wait for the HTTP handler (see hold.go)
	}
	c.open()
	c.startKeepalive()
}

// panickedOpen ends c, whose OnOpen panicked, as internalError does, by
// Close: OnOpen has no action to return. It runs on the loop.
func (c *Conn) panickedOpen(pe *engine.PanicError) {
	c.internalError(pe)
	c.ec().Close()
}

// open runs the handler's OnOpen.
func (c *Conn) open() {
	c.opened = true
	c.cfg.stats.opened()
	c.callOpen()
}

// OnData parses messages, and the handler's callbacks for them run
// within it: one that panics fails the connection with a close frame
// 1011 (internalError) unless the engine lets panics crash (see
// engine.Conn.Recover).
func (p *protocol) OnData(ec *engine.Conn, in *engine.Inbound) (act engine.Action) {
	c := (*Conn)(p)
	defer ec.Recover(func(pe *engine.PanicError) { act = c.internalError(pe) })
	if hs := c.handshake(); hs != nil {
		return hs.onData(c, in)
	}
	if !c.opened { // its callbacks wait: the input waits with them
		c.parked |= parkedInput
		in.PauseRead()
		return engine.None
	}
	return c.onData(in)
}

// OnDeadline ends a close handshake that took too long, and runs
// keepalive (see keepalive.go); no other read deadline is set.
func (p *protocol) OnDeadline(ec *engine.Conn, err error) engine.Action {
	c := (*Conn)(p)
	if c.handshake() != nil {
		c.setCloseErr(err)
		ec.Abort()
		return engine.None
	}
	if !c.closeWait && c.keepalive() && errors.Is(err, engine.ErrReadDeadline) {
		return c.keepaliveExpired(ec)
	}
	if c.closeWait {
		c.setCloseErr(ErrCloseTimeout)
	} else {
		c.setCloseErr(err)
	}
	ec.Abort()
	return engine.None
}

// OnEOF ends a connection whose peer ended its stream without a close
// frame: it closes once its queued output is written, within
// CloseTimeout (see closeAfterOutput).
func (p *protocol) OnEOF(ec *engine.Conn) engine.Action {
	c := (*Conn)(p)
	if c.handshake() != nil {
		return engine.Close
	}
	if !c.opened { // its callbacks wait: the end waits with them
		c.parked |= parkedEOF
		return engine.None
	}
	c.rd.eof = true
	return c.closeAfterOutput()
}

// OnClose runs the handler's OnClose, once, with the first reason
// recorded (a close frame, a protocol error...) or else the engine's.
func (p *protocol) OnClose(ec *engine.Conn, err error) {
	c := (*Conn)(p)
	if c.ended {
		return
	}
	c.ended = true
	if c.cfg.live != nil {
		c.cfg.live.untrack(c)
	}
	c.ecp.Store(ec) // (if OnOpen never came)
	c.wmu.Lock()
	c.endLocked() // an open stream ends, and writes fail from now on
	r := c.rareLocked()
	if r.closeErr == nil {
		r.closeErr = err
		switch {
		case err != nil:
		case c.rd.eof: // closed after its queued output, once OnEOF (or its like: see hold.go) came
			r.closeErr = io.EOF
		default:
			r.closeErr = net.ErrClosed
		}
	}
	err = r.closeErr
	held := !c.opened && c.hold != holdNone
	if held {
		c.hold = holdEnded
	}
	c.wmu.Unlock()
	c.releaseReader()
	if r.hs != nil {
		r.hs.fail(err)
		return
	}
	if held {
		return // the release runs OnOpen and OnClose (see hold.go)
	}
	if !c.opened {
		c.open() // the posted OnOpen came too late, or no OnOpen came: a Conn gets both
	}
	c.cfg.stats.closed(err)
	c.callClose(err)
}

// releaseReader returns the reader's buffers.
func (c *Conn) releaseReader() {
	putBuf(c.rd.msg)
	c.rd.msg = nil
	c.releaseStream()
	if pmd := c.deflate(); pmd != nil {
		pmd.win = nil
	}
}

// engineHandler serves the connections of NewEngine's engines: each one's
// context is its *Conn.
type engineHandler struct{ engine.BaseHandler }

func (engineHandler) OnOpen(ec *engine.Conn) ([]byte, engine.Action) {
	if p, ok := ec.Context().(*protocol); ok {
		p.OnOpen(ec)
		return nil, engine.None
	}
	return nil, engine.Close
}

func (engineHandler) OnData(ec *engine.Conn, in *engine.Inbound) engine.Action {
	return ec.Context().(*protocol).OnData(ec, in)
}

func (engineHandler) OnEOF(ec *engine.Conn) engine.Action {
	if p, ok := ec.Context().(*protocol); ok {
		return p.OnEOF(ec)
	}
	return engine.Close
}

func (engineHandler) OnDeadline(ec *engine.Conn, err error) engine.Action {
	return ec.Context().(*protocol).OnDeadline(ec, err)
}

func (engineHandler) OnClose(ec *engine.Conn, err error) {
	if p, ok := ec.Context().(*protocol); ok {
		p.OnClose(ec, err)
	}
}
