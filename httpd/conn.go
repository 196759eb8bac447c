package httpd

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/connslot"
	"github.com/galeio/gale/internal/h2frame"
)

// The states of a loop-served connection. The loop owns the connection
// while it is idle; a request's handler owns it from the end of the head
// until the handler returns. The transitions between them are atomic,
// so that a handler that ends with nothing left for the loop to do
// (the common keep-alive case) needs no word with the loop.
const (
	stIdle    int32 = iota // the loop reads and parses the next head
	stBusy                 // a handler runs; the loop feeds its body, if any
	stPending              // a handler runs; the loop holds input for after it
	stDone                 // the handler returned; the loop must finish up
)

// conn is a loop-served connection: the engine.Conn's context. Unless
// noted, fields belong to the connection's loop.
type conn struct {
	s     *Server
	ec    *engine.Conn
	ctx   context.Context // BaseContext, then ConnContext
	raddr string
	tls   *tls.ConnectionState

	state atomic.Int32
	quit  atomic.Bool // close after the response in progress; parse nothing more
	// userWDL is set when a handler set the write deadline: the next
	// request clears it (net/http resets it around every request).
	userWDL atomic.Bool
	// busy is the context of the request whose handler runs, canceled
	// when the connection ends under it.
	busy atomic.Pointer[reqCtx]

	// The fields are packed: an idle connection is this struct, its
	// engine.Conn and its socket (CHANGELOG.md has its history).
	inHead    bool      // a head has begun arriving
	afterPOST bool      // the last request was a POST: skip stray CRLFs
	held      bool      // reading paused (PauseRead)
	eof       bool      // the peer closed its side
	handing   bool      // Hijack takes the connection: consume nothing (handOff)
	closed    bool      //
	served    bool      // a request was served
	scanned   int32     // head bytes already searched for the head's end (< maxHead)
	headAt    int64     // when the head began arriving, in Unix nanoseconds
	lingering int64     // while closing, when the linger ends (see linger)
	cur       *exchange // the request whose body the loop still reads
	proto     Protocol  // after Upgrade, what serves the connection instead

	links links // in the server's connList; guarded by Server.mu
}

func (s *Server) newConn(base context.Context) *conn {
	return &conn{s: s, ctx: base}
}

// loopHandler is the Server as the engine's Handler.
type loopHandler Server

// Offloads tells the engine's Auto that handlers run on pooled
// goroutines: every request crosses from the loop and its response back,
// which an io_uring loop, holding its OS thread, pays for with a wake-up
// across threads each time; Auto picks epoll (package backend).
func (h *loopHandler) Offloads() bool { return true }

func (h *loopHandler) OnBoot(*engine.Engine) engine.Action { return engine.None }
func (h *loopHandler) OnShutdown(*engine.Engine)           {}
func (h *loopHandler) OnTick() (time.Duration, engine.Action) {
	return 0, engine.None
}

func (h *loopHandler) OnOpen(ec *engine.Conn) ([]byte, engine.Action) {
	c := ec.Context().(*conn)
	s := c.s
	c.ec = ec
	if ra := ec.RemoteAddr(); ra != nil {
		c.raddr = ra.String()
	}
	if st, ok := ec.ConnectionState(); ok {
		c.tls = &st
	}
	if s.ConnContext != nil {
		if c.ctx = s.ConnContext(c.ctx, c); c.ctx == nil {
			panic("httpd: ConnContext returned nil")
		}
	}
	if !s.addConn(c) {
		return nil, engine.Close
	}
	s.setState(c, http.StateNew)
	if d := s.headerTimeout(); d > 0 {
		ec.SetReadDeadline(time.Now().Add(d))
	}
	if c.tls != nil {
		if c.tls.NegotiatedProtocol == "h2" {
			if c.tls.Version < tls.VersionTLS12 {
				// RFC 9113 §9.2: HTTP/2 over TLS 1.2 or later only.
				ec.Write(h2frame.AppendGoAway(nil, 0, h2frame.ErrCodeInadequateSecurity, nil))
				return nil, engine.Close
			}
			c.startH2()
		} else if h1, _, _ := s.serves(); !h1 {
			return nil, engine.Close // HTTP/2 only, and the client did not ask for it
		}
	}
	return nil, engine.None
}

// route returns what serves ec: its *conn, or its Protocol once it
// switched (see switchTo). The *conn is ec's Context until Upgrade hands
// the connection out, then, as the Protocol, in ec's slot (connslot), out
// of reach of the user's SetContext.
func route(ec *engine.Conn) (*conn, Protocol) {
	switch v := connslot.Get(ec).(type) {
	case Protocol:
		return nil, v
	default:
		return v.(*conn), nil
	}
}

func (h *loopHandler) OnData(ec *engine.Conn, in *engine.Inbound) engine.Action {
	c, p := route(ec)
	if p != nil {
		return p.OnData(ec, in)
	}
	if c.proto != nil {
		act := c.proto.OnData(ec, in)
		if c.eof && act == engine.None { // the client's end came before the switch
			c.eof = false
			act = protoEOF(c.proto, ec)
		}
		return act
	}
	act := c.serveInput(in)
	c.flow(in)
	return act
}

// serveInput moves the connection on with the input it has: it feeds
// the body of the request in progress, finishes a request whose handler
// returned, and parses heads.
func (c *conn) serveInput(in *engine.Inbound) engine.Action {
	if c.handing {
		return engine.None // what comes is the hijacked connection's
	}
	for {
		switch c.state.Load() {
		case stBusy:
			if c.cur != nil && !c.feed(in) {
				return engine.None // the body wants more, or has no room
			}
			if in.Len() == 0 || c.state.CompareAndSwap(stBusy, stPending) {
				return engine.None
			}
		case stPending:
			return engine.None
		case stDone:
			if c.quit.Load() {
				if ex := c.cur; ex != nil {
					c.endBody(ex, errUnexpectedEOF)
				}
				c.state.Store(stIdle)
				c.linger(in)
				return engine.None
			}
			if c.cur != nil && !c.feed(in) {
				return engine.None // discarding the unread body
			}
			c.state.Store(stIdle)
		case stIdle:
			if c.lingering != 0 {
				c.linger(in)
				return engine.None
			}
			if c.eof {
				in.Discard(in.Len())
				return engine.None
			}
			if c.quit.Load() {
				// The response is written and the connection closes: a
				// body dropped past maxDiscard, say. Input still comes
				// while the client sends; lingering ends it.
				c.linger(in)
				return engine.None
			}
			if in.Len() == 0 {
				return engine.None
			}
			if !c.served && !c.inHead && c.tls == nil && c.s.h2c() {
				if act, ok := c.priorKnowledge(in); ok {
					return act
				}
			}
			if act, ok := c.readHead(in); !ok {
				return act
			}
		}
	}
}

// flow pauses reading while the connection waits for its handler with
// input in hand, or for the handler to read the body it has, and
// resumes it otherwise.
func (c *conn) flow(in *engine.Inbound) {
	if ex := c.cur; ex != nil && !ex.readBy.IsZero() {
		// ReadTimeout bounds the whole body; the engine's read deadline
		// is met by each consumption, so it is set again.
		c.ec.SetReadDeadline(ex.readBy)
	}
	st := c.state.Load()
	want := !c.handing && (st == stIdle || st == stDone ||
		st == stBusy && (c.cur == nil || c.cur.body.room()))
	switch {
	case want && c.held:
		c.held = false
		in.ResumeRead()
	case !want && !c.held:
		c.held = true
		in.PauseRead()
	}
}

// OnEOF keeps a connection whose client half-closed open until the
// response in progress is written, as net/http does; the request's
// context is canceled, as net/http's is when its background read sees
// the end.
func (h *loopHandler) OnEOF(ec *engine.Conn) engine.Action {
	c, p := route(ec)
	if p != nil {
		return protoEOF(p, ec)
	}
	if c.proto != nil {
		return protoEOF(c.proto, ec)
	}
	c.eof = true
	c.quit.Store(true)
	if ex := c.cur; ex != nil {
		c.endBody(ex, errUnexpectedEOF)
	}
	switch c.state.Load() {
	case stIdle, stDone:
		return engine.Close
	}
	if ctx := c.busy.Load(); ctx != nil {
		ctx.cancel(context.Canceled)
	}
	return engine.None
}

// protoEOF tells an upgraded connection's Protocol that the client's
// stream ended: OnEOF if it is a HalfCloser; otherwise the connection
// closes.
func protoEOF(p Protocol, ec *engine.Conn) engine.Action {
	if hc, ok := p.(engine.HalfCloser); ok {
		return hc.OnEOF(ec)
	}
	return engine.Close
}

func (h *loopHandler) OnDeadline(ec *engine.Conn, err error) engine.Action {
	c, p := route(ec)
	if p != nil {
		return p.OnDeadline(ec, err)
	}
	if c.proto != nil {
		return c.proto.OnDeadline(ec, err)
	}
	if err == engine.ErrWriteDeadline {
		c.quit.Store(true)
		ec.Abort()
		return engine.None
	}
	if ex := c.cur; ex != nil && c.state.Load() == stBusy {
		c.quit.Store(true)
		c.endBody(ex, errReadTimeout) // the handler answers; the connection then closes
		return engine.None
	}
	if c.state.Load() == stIdle {
		return engine.Close // idle, header or linger timeout
	}
	return engine.None
}

func (h *loopHandler) OnClose(ec *engine.Conn, err error) {
	s := (*Server)(h)
	c, p := route(ec)
	if p != nil {
		p.OnClose(ec, err)
		s.upgradedClosed()
		return
	}
	if c.ec == nil { // no OnOpen: a PROXY header or a TLS handshake failed
		s.open.Add(-1)
		switch {
		case err == nil || err == engine.ErrEngineStopped || errors.Is(err, engine.ErrTooManyConns):
			// Stats counts the refusals (Engine.MaxConns, MaxConnsPerIP).
		case errors.Is(err, engine.ErrProxyHeader):
			s.logf("httpd: PROXY header from %v: %v", ec.RemoteAddr(), err)
		default:
			s.logf("http: TLS handshake error from %v: %v", ec.RemoteAddr(), err)
		}
		return
	}
	c.closed = true
	c.quit.Store(true)
	if c.proto != nil {
		c.proto.OnClose(ec, err)
		s.removeConn(c)
		return
	}
	if ex := c.cur; ex != nil {
		c.endBody(ex, errUnexpectedEOF)
	}
	if ctx := c.busy.Load(); ctx != nil {
		ctx.cancel(context.Canceled)
	}
	s.removeConn(c)
	if err != engine.ErrDetached {
		s.setState(c, http.StateClosed)
	}
}

// headerTimeout is ReadHeaderTimeout, or ReadTimeout when it is 0.
func (s *Server) headerTimeout() time.Duration {
	if s.ReadHeaderTimeout > 0 {
		return s.ReadHeaderTimeout
	}
	return s.ReadTimeout
}

// idleTimeout is IdleTimeout, or ReadTimeout when it is 0.
func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return s.ReadTimeout
}

// lingerTime is how long a closing connection that may still receive the
// client's bytes (a body it did not read, a refused head, pipelined
// requests) waits for the client's end of stream before it closes:
// closing at once, with bytes unread, would reset the connection, and the
// client would lose the response it has not read yet. net/http waits as
// long (rstAvoidanceDelay).
const lingerTime = 500 * time.Millisecond

// linger closes the connection the careful way: it shuts down the
// sending side once the response is written, then reads and drops what
// the client still sends, until its end of stream (OnEOF) or lingerTime.
// It runs on the loop.
func (c *conn) linger(in *engine.Inbound) {
	c.quit.Store(true)
	in.Discard(in.Len())
	if c.lingering == 0 {
		c.lingering = time.Now().Add(lingerTime).UnixNano()
		c.ec.CloseWrite()
	}
	c.ec.SetReadDeadline(time.Unix(0, c.lingering)) // met by each input dropped: set again
}
