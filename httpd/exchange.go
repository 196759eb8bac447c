package httpd

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/engine"
)

// exchange is one request and its response. It is pooled: the loop holds
// one reference while it reads the request's body, the handler's
// goroutine one while the handler runs, and the last to let go returns it.
type exchange struct {
	c    *conn
	req  *http.Request
	ctx  *reqCtx
	body body
	resp response
	refs atomic.Int32

	// bodyDone is set by the loop once the body is read to its end (or
	// failed): the handler's goroutine may then hand the connection
	// straight back.
	bodyDone atomic.Bool

	// Loop-owned: the body's framing.
	chunked   bool
	remaining int64 // bytes of a Content-Length body still to read
	dec       chunkedDecoder
	discarded int64 // bytes dropped after the handler returned

	hijackBuf []byte // the unread body a hijack hands over; set on the loop, read after the detach

	after []func() // AfterHandler's, run by finish; the handler's goroutine's

	readBy time.Time // ReadTimeout's end for the body, if any
}

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// release drops a reference; the last returns ex to the pool.
func (ex *exchange) release() {
	if ex.refs.Add(-1) != 0 {
		return
	}
	ex.body.reset()
	ex.resp.reset()
	ex.c, ex.req, ex.ctx = nil, nil, nil
	ex.bodyDone.Store(false)
	ex.chunked, ex.remaining, ex.discarded = false, 0, 0
	ex.hijackBuf = nil
	ex.readBy = time.Time{}
	ex.dec = chunkedDecoder{}
	exchanges.Put(ex)
}

// begin starts serving req, whose head was just consumed from in: it
// frames the body, hands the request to a handler and feeds it the body
// bytes already here. ctx is req's context, or nil when req has none yet.
// It reports true when the connection may go on.
func (c *conn) begin(req *http.Request, ctx *reqCtx, in *engine.Inbound) (engine.Action, bool) {
	s := c.s
	if field(req.Header, "Expect") != "" && !expectsContinue(req) {
		s.refused.count(http.StatusExpectationFailed)
		c.ec.Write(expectationFailed(req))
		c.linger(in)
		return engine.None, false
	}
	ex := exchanges.Get().(*exchange)
	ex.c = c
	ex.refs.Store(1)
	if ctx == nil {
		ctx = newReqCtx(c)
		req = req.WithContext(ctx)
	}
	ex.ctx = ctx
	r := req
	r.RemoteAddr, r.TLS = c.raddr, c.tls
	if len(req.TransferEncoding) > 0 && req.TransferEncoding[0] == "chunked" {
		ex.chunked = true
	} else {
		ex.remaining = req.ContentLength
	}
	if ex.chunked || ex.remaining > 0 {
		ex.body.init(ex, r, s.bodyBufferSize(), s.readSize(), s.MaxBodyBytes)
		ex.body.expect = r.ProtoAtLeast(1, 1) && expectsContinue(r)
		r.Body = &ex.body
		ex.refs.Add(1)
		c.cur = ex
	} else {
		r.Body = http.NoBody
		ex.bodyDone.Store(true)
	}
	ex.req = r
	ex.resp.init(ex)
	if d := s.WriteTimeout; d > 0 {
		c.ec.SetWriteDeadline(time.Now().Add(d))
	} else if c.userWDL.Swap(false) {
		c.ec.SetWriteDeadline(time.Time{}) // the last handler's
	}
	if d := s.ReadTimeout; d > 0 && c.cur != nil {
		ex.readBy = time.Unix(0, c.headAt).Add(d)
		c.ec.SetReadDeadline(ex.readBy)
	} else if s.headerTimeout() > 0 {
		c.ec.SetReadDeadline(time.Time{})
	}
	c.state.Store(stBusy)
	c.busy.Store(ex.ctx)
	if !s.pool.submit(ex) {
		s.logf("%v: refusing a request from %s", errNoHandlers, c.raddr)
		s.refused.count(http.StatusServiceUnavailable)
		c.state.Store(stIdle)
		c.busy.Store(nil)
		if c.cur != nil {
			c.cur = nil
			ex.release()
		}
		ex.ctx.cancel(context.Canceled)
		ex.release()
		c.ec.Write([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		c.linger(in)
		return engine.None, false
	}
	return engine.None, true
}

// expectsContinue reports whether r asks for 100 Continue: the token
// anywhere in its Expect field, as net/http finds it.
func expectsContinue(r *http.Request) bool {
	return hasToken(field(r.Header, "Expect"), "100-continue")
}

func (s *Server) bodyBufferSize() int {
	if s.BodyBufferSize > 0 {
		return s.BodyBufferSize
	}
	return 128 << 10
}

// readSize is the most a receive of the loop's brings.
func (s *Server) readSize() int {
	if n := s.Engine.ReadBufferSize; n > 0 {
		return n
	}
	return 64 << 10
}

// run serves ex on a handler goroutine, and reports whether the handler
// took the connection with Hijack, which released its place in the pool
// (ex is released either way).
func (ex *exchange) run() (detached bool) {
	c, s := ex.c, ex.c.s
	defer func() { detached = ex.finish() }()
	defer func() {
		if p := recover(); p != nil {
			// Logged before the connection is cut, as net/http does: a
			// client that sees the cut finds the log written.
			if p != http.ErrAbortHandler {
				s.logf("http: panic serving %v: %v\n%s", c.raddr, p, stack())
			}
			ex.resp.abort()
		}
	}()
	h := s.Handler
	if h == nil {
		h = http.DefaultServeMux
	}
	if ex.req.RequestURI == "*" && ex.req.Method == "OPTIONS" {
		h = optionsHandler{}
	}
	h.ServeHTTP(&ex.resp, ex.req)
	return false // finish's
}

// finish ends the response, then hands the connection back to the loop:
// directly when the loop has nothing to do for it, with a Wake when it
// holds input or a body to discard. It reports whether the connection
// was taken with Hijack.
func (ex *exchange) finish() bool {
	c := ex.c
	hijacked, detached := ex.resp.hijacked, ex.resp.detached
	if !hijacked {
		ex.resp.finish()
	}
	ex.ctx.cancel(context.Canceled)
	c.busy.CompareAndSwap(ex.ctx, nil)
	for i, f := range ex.after {
		ex.after[i] = nil
		f()
	}
	ex.after = ex.after[:0]
	if hijacked {
		ex.release()
		return detached
	}
	closing := ex.resp.closeAfter || !c.keepAlive() || c.quit.Load() // quit: the client half-closed, say
	if closing {
		c.quit.Store(true)
	} else {
		c.s.setState(c, http.StateIdle)
		if d := c.s.idleTimeout(); d > 0 {
			c.ec.SetReadDeadline(time.Now().Add(d))
		}
	}
	done := ex.bodyDone.Load()
	if !done {
		ex.body.abandon()
	}
	ex.release()
	if done && c.state.CompareAndSwap(stBusy, stIdle) {
		// quit is read again: the client's end of stream may have come
		// while the handler ran, after closing was decided. OnEOF sets
		// quit before it reads the state, so either it saw stIdle and
		// closed, or this sees quit (both atomic); reading closing alone
		// left a connection whose EOF was already consumed open for good.
		if closing || c.quit.Load() {
			c.ec.Close() // nothing unread: a plain close
		} else if c.s.shutting.Load() {
			c.handOffSoon() // idle now: hand it over before its next request
		}
		return false
	}
	// The loop has work: a body to discard, input held, or a close that
	// must not reset the response away (linger).
	c.state.Store(stDone)
	c.ec.Wake()
	return false
}

// optionsHandler answers "OPTIONS *" as net/http does.
type optionsHandler struct{}

func (optionsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "0")
	if r.ContentLength != 0 {
		// Up to 4 KiB of body is read; a longer one closes the
		// connection, as net/http's http.MaxBytesReader makes it.
		if n, _ := io.Copy(io.Discard, io.LimitReader(r.Body, 4<<10+1)); n > 4<<10 {
			w.(*response).closeAfterBody()
		}
	}
}

// expectationFailed is net/http's answer to an Expect it cannot meet: an
// ordinary response, in the request's version, that closes.
func expectationFailed(r *http.Request) []byte {
	b := appendStatusLine(nil, r.ProtoAtLeast(1, 1), http.StatusExpectationFailed)
	b = append(b, "Connection: close\r\n"...)
	b = append(b, "Date: "...)
	b = append(b, date()...)
	return append(b, "\r\nContent-Length: 0\r\n\r\n"...)
}
