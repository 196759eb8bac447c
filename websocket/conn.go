package websocket

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/workpool"
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
	closeSent bool  // a close frame was queued: nothing may follow; under wmu
	closed    bool  // the connection closed, or is being cut: writes fail with net.ErrClosed; under wmu
	hold      uint8 // whether callbacks wait for the HTTP handler (see hold.go); under wmu
	role      role

	// Loop-owned: the reader's state, and the close handshake's.
	opened    bool  // OnOpen ran
	ended     bool  // OnClose ran
	closeWait bool  // the close frame was sent: rare.closeBy bounds the wait
	parked    uint8 // what came while the callbacks waited (see hold.go)
	rd        reader

	// ctx boxes the user's value, nil while it is nil: a connection
	// with none (a server that keeps its own table) saves the 16 bytes
	// of an interface, and one with a value pays them in the box, made
	// at its first SetContext. Under wmu.
	ctx *any
	// rare holds what most connections never need (see connRare), made
	// on first need: so an idle connection is 80 bytes.
	rare atomic.Pointer[connRare]
}

// connRare is the part of a Conn that few connections need. It is made
// before the Conn is shared when the handshake needs it (a subprotocol,
// permessage-deflate, a client's handshake), or else by whoever needs it
// first, under wmu (rareLocked), and never replaced; each field says who
// owns it.
type connRare struct {
	sub      string     // the subprotocol agreed on; set before Subprotocol may be called
	pmd      *pmdState  // permessage-deflate's agreement; nil without it. Set before the Conn is shared
	hs       *handshake // a client's, until its handshake ends; loop-owned
	closeErr error      // what OnClose is given, if set before it; under wmu
	closeBy  int64      // after the close frame was sent, when to stop waiting (Unix ns); loop-owned

	// The stream being sent, and the messages begun while it is open,
	// which follow it (see held.go). held is empty while live is nil.
	live  *stream   // its fragments go out as they are written; under wmu
	held  []heldMsg // in the order they were begun; under wmu
	heldN int       // the bytes of held's frames, its streams' included; under wmu

	// The message being read in pieces, for a StreamHandler (see
	// reader_stream.go).
	in       *streamIn   // made at the first such message; loop-owned
	readHeld atomic.Bool // PauseRead was called, ResumeRead not since: a StreamHandler's pieces stop

	pool atomic.Pointer[poolQueue] // the callbacks waiting for Options.Pool (offload.go)
}

// rareLocked returns c's rare part, made if it has none. c.wmu is held.
func (c *Conn) rareLocked() *connRare {
	r := c.rare.Load()
	if r == nil {
		r = new(connRare)
		c.rare.Store(r)
	}
	return r
}

// deflate returns permessage-deflate's agreement, or nil if there is
// none. It lives in connRare, which a connection that agreed on it has:
// the 8 bytes of a pointer in every Conn keep it in the 80-byte size
// class (TestConnSize).
func (c *Conn) deflate() *pmdState {
	if r := c.rare.Load(); r != nil {
		return r.pmd
	}
	return nil
}

// handshake returns a client's handshake in progress, or nil. It runs on
// the loop.
func (c *Conn) handshake() *handshake {
	if r := c.rare.Load(); r != nil {
		return r.hs
	}
	return nil
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
	stream  StreamHandler  // nil unless handler is one: messages are read in pieces
	pool    *workpool.Pool // Options.Pool's, or nil: callbacks on the loop
	live    *liveSet       // an Upgrader's connections, for its Shutdown; nil for a Dialer's
	stats   counters       // Upgrader.Stats, Dialer.Stats
}

func newConfig(o Options) *config {
	cfg := &config{Options: o.withDefaults(), handler: o.Handler}
	if cfg.handler == nil {
		cfg.handler = BaseHandler{}
	}
	cfg.pinger, _ = cfg.handler.(PingHandler)
	cfg.ponger, _ = cfg.handler.(PongHandler)
	cfg.stream, _ = cfg.handler.(StreamHandler)
	if o.Pool != nil {
		cfg.pool = workpool.FromEngine(o.Pool)
	}
	return cfg
}

// ec is the engine connection.
func (c *Conn) ec() *engine.Conn { return c.ecp.Load() }

// Subprotocol returns the subprotocol agreed on in the handshake, or "".
func (c *Conn) Subprotocol() string {
	if r := c.rare.Load(); r != nil {
		return r.sub
	}
	return ""
}

// Compressed reports whether permessage-deflate was agreed on.
func (c *Conn) Compressed() bool { return c.deflate() != nil }

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.ec().LocalAddr() }

// RemoteAddr returns the peer's network address.
func (c *Conn) RemoteAddr() net.Addr { return c.ec().RemoteAddr() }

// Context returns the connection's value: the one UpgradeWith or
// DialWith gave it, or SetContext's latest; nil if none.
func (c *Conn) Context() any {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.ctx == nil {
		return nil
	}
	return *c.ctx
}

// newConn returns a Conn of cfg's playing role, with v as its value:
// one allocation, two with a value (TestNewConnAllocs).
func newConn(cfg *config, role role, v any) *Conn {
	return &Conn{cfg: cfg, role: role, ctx: boxed(v)}
}

// boxed returns v in a box of its own for Conn.ctx, or nil for nil.
func boxed(v any) *any {
	if v == nil {
		return nil
	}
	b := new(any) // not &v: inlined, that moves the caller's v to the heap whatever it is
	*b = v
	return b
}

// SetContext attaches v to the connection, for the callbacks to find. It
// may be called from any goroutine, callbacks included.
//
// On a connection that Upgrade returned, the callbacks wait for the
// handler's first SetContext (or its return): so a handler may call
// SetContext once Upgrade returned, as with gorilla's or nbio's
// connections, and OnOpen already finds v. On a Dialer's connection
// OnOpen may have run before Dial returned: give the value to DialWith
// instead.
func (c *Conn) SetContext(v any) {
	c.wmu.Lock()
	if c.ctx != nil {
		*c.ctx = v // the box is the Conn's alone: Context copies the value out
	} else {
		c.ctx = boxed(v)
	}
	h := c.hold
	c.hold = holdNone
	c.wmu.Unlock()
	c.resume(h)
}

// Buffered returns the number of bytes queued for the peer and not yet
// sent, those of messages held behind a stream (see NextWriter) included:
// what Options.MaxQueued caps.
func (c *Conn) Buffered() int {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.queuedLocked()
}

// PauseRead stops reading the connection's messages until ResumeRead: a
// handler that hands messages to a slower worker holds the peer back
// with it (TCP's flow control then does the rest). Messages already
// received may still be delivered, but a StreamHandler's pieces stop at
// once: none follows the OnMessageData that called PauseRead.
func (c *Conn) PauseRead() error {
	if c.cfg.stream != nil {
		c.wmu.Lock()
		r := c.rareLocked()
		c.wmu.Unlock()
		r.readHeld.Store(true)
	}
	return c.ec().PauseRead()
}

// ResumeRead resumes reading after PauseRead.
func (c *Conn) ResumeRead() error {
	if c.cfg.stream == nil {
		return c.ec().ResumeRead()
	}
	if r := c.rare.Load(); r != nil {
		r.readHeld.Store(false)
	}
	if err := c.ec().ResumeRead(); err != nil {
		return err
	}
	return c.ec().Wake() // the pieces PauseRead left unread
}

// Engine returns the engine whose loop serves the connection.
func (c *Conn) Engine() *engine.Engine { return c.ec().Engine() }

// CloseNow closes the connection at once, without a close handshake:
// queued output is dropped, a stream left open ends, and every write from
// then on fails with net.ErrClosed. OnClose gets net.ErrClosed.
func (c *Conn) CloseNow() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.cutLocked(net.ErrClosed)
}

// Hangup ends the connection without a close handshake, as closing a
// net.Conn does (gorilla's Conn.Close; see websocket/gorilla): what is
// queued is written first, then the TCP connection is closed gracefully
// (engine.Conn.Close), so the peer reads it all, then the end of the
// stream. Messages held behind an open stream are dropped, and every
// write from then on fails with net.ErrClosed. OnClose gets net.ErrClosed.
// A peer that does not read holds the connection, and what is queued for
// it, until the engine's idle timeout, as the kernel holds a closed
// socket's unsent bytes. Safe from any goroutine; it does not wait.
func (c *Conn) Hangup() error {
	c.wmu.Lock()
	if r := c.rareLocked(); r.closeErr == nil {
		r.closeErr = net.ErrClosed
	}
	c.endLocked()
	c.wmu.Unlock()
	return c.ec().Close()
}

// setCloseErr records err as OnClose's, unless a reason came first.
func (c *Conn) setCloseErr(err error) {
	c.wmu.Lock()
	if r := c.rareLocked(); r.closeErr == nil {
		r.closeErr = err
	}
	c.wmu.Unlock()
}
