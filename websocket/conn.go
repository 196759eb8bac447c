package websocket

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/galeio/gale/engine"
)

// Conn is a WebSocket connection, served on a loop. Its write methods and
// accessors are safe to call from any goroutine, callbacks included; its
// reads happen on the loop, which hands each message to Handler.OnMessage.
type Conn struct {
	ecp atomic.Pointer[engine.Conn] // set before Upgrade or Dial returns, and before OnOpen
	cfg *config                     // the Upgrader's or Dialer's, shared

	// wmu orders the frames written to the connection: a message's (a
	// stream's fragments) against others' and the close frame. It is
	// held only while a frame is made and queued, never while a caller's
	// code runs, so the loop may take it.
	wmu       sync.Mutex
	closeSent bool          // a close frame was queued: nothing may follow; under wmu
	stream    chan struct{} // not nil while a stream is open; closed at its end; under wmu
	closeErr  error         // what OnClose is given, if set before it; under wmu

	ctx  any    // the user's; under wmu
	sub  string // the subprotocol agreed on
	pmd  pmdState
	role role

	// Loop-owned: the reader's state; hs until a client's handshake ends.
	hs      *handshake
	rd      reader
	closeBy int64 // after the close frame was sent, when to stop waiting (Unix ns)
	opened  bool  // OnOpen ran
	ended   bool  // OnClose ran
}

// role says which end of the connection this is: it decides masking.
type role uint8

const (
	server role = iota
	client
)

// config is an Upgrader's or Dialer's Options with defaults, made once.
type config struct {
	Options
	handler Handler
	pinger  PingHandler // nil unless handler is one
	ponger  PongHandler
}

func newConfig(o Options) *config {
	cfg := &config{Options: o.withDefaults(), handler: o.Handler}
	if cfg.handler == nil {
		cfg.handler = BaseHandler{}
	}
	cfg.pinger, _ = cfg.handler.(PingHandler)
	cfg.ponger, _ = cfg.handler.(PongHandler)
	return cfg
}

// ec is the engine connection.
func (c *Conn) ec() *engine.Conn { return c.ecp.Load() }

// Subprotocol returns the subprotocol agreed on in the handshake, or "".
func (c *Conn) Subprotocol() string { return c.sub }

// Compressed reports whether permessage-deflate was agreed on.
func (c *Conn) Compressed() bool { return c.pmd.on }

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.ec().LocalAddr() }

// RemoteAddr returns the peer's network address.
func (c *Conn) RemoteAddr() net.Addr { return c.ec().RemoteAddr() }

// Context returns the value SetContext set, or nil.
func (c *Conn) Context() any {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.ctx
}

// SetContext attaches v to the connection, for the callbacks to find.
func (c *Conn) SetContext(v any) {
	c.wmu.Lock()
	c.ctx = v
	c.wmu.Unlock()
}

// Buffered returns the number of bytes queued for the peer and not yet
// sent.
func (c *Conn) Buffered() int { return c.ec().OutboundBuffered() }

// PauseRead stops reading the connection's messages until ResumeRead: a
// handler that hands messages to a slower worker holds the peer back
// with it (TCP's flow control then does the rest).
func (c *Conn) PauseRead() error { return c.ec().PauseRead() }

// ResumeRead resumes reading after PauseRead.
func (c *Conn) ResumeRead() error { return c.ec().ResumeRead() }

// Engine returns the engine whose loop serves the connection.
func (c *Conn) Engine() *engine.Engine { return c.ec().Engine() }

// CloseNow closes the connection at once, without a close handshake:
// queued output is dropped. OnClose gets net.ErrClosed.
func (c *Conn) CloseNow() error {
	c.setCloseErr(net.ErrClosed)
	return c.ec().Abort()
}

// setCloseErr records err as OnClose's, unless a reason came first.
func (c *Conn) setCloseErr(err error) {
	c.wmu.Lock()
	if c.closeErr == nil {
		c.closeErr = err
	}
	c.wmu.Unlock()
}
