package httpd

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/connslot"
)

// Protocol serves a connection after an HTTP/1.1 upgrade (a 101
// Switching Protocols response), on the connection's loop, in place of
// the HTTP server: see Upgrade. Its callbacks are engine.Handler's, with
// its rules: they run on the loop, one at a time, and must not block. A
// Protocol that also implements engine.HalfCloser gets OnEOF.
type Protocol interface {
	// OnOpen runs once the connection has switched, before any OnData.
	OnOpen(c *engine.Conn)
	// OnData is given every byte the client sent after the upgrade's
	// request, as engine.Handler.OnData is.
	OnData(c *engine.Conn, in *engine.Inbound) engine.Action
	OnDeadline(c *engine.Conn, err error) engine.Action
	OnClose(c *engine.Conn, err error)
}

// ErrNotLoop is returned by Upgrade for a ResponseWriter that is not one
// of a loop-served connection (net/http's own, or ModeMixed's below its
// threshold): the caller hijacks the connection instead.
var ErrNotLoop = fmt.Errorf("httpd: not a loop-served connection: %w", errors.ErrUnsupported)

// Upgrade switches the connection whose request w answers to p, for good:
// it writes "101 Switching Protocols" with w's header, then, on the
// connection's loop, hands the connection to p (OnOpen), with whatever
// the client sent after the request (OnData). The handler calls it before
// it writes anything and returns after it; the request must have no body
// left unread. The connection stays on its loop, TLS included; to the
// Server it is hijacked (ConnState reports StateHijacked), except that
// Shutdown waits for it to close as for any other connection — tell it
// to go with RegisterOnShutdown — and Close ends it.
//
// Upgrade returns the connection, which the caller may write to at once
// (after the 101). Its Context is the caller's, nil until set: p is found
// apart from it, so that SetContext, from the handler or from p's
// callbacks, does not move the connection off p. It fails with
// ErrNotLoop when w is not a loop-served response (callers fall back to
// http.Hijacker), and with net.ErrClosed when the client went before the
// switch; p then gets no callback.
func Upgrade(w http.ResponseWriter, p Protocol) (*engine.Conn, error) {
	r := loopResponse(w)
	if r == nil {
		return nil, ErrNotLoop
	}
	head := upgradeHead(r.header)
	ec, err := r.switchTo(head.Bytes(), p)
	putUpgradeHead(head)
	return ec, err
}

// upgradeHeads are the buffers 101 heads are written in: a head goes to
// the engine's Write, which copies what it cannot send at once, so its
// buffer is free again once switchTo returns. A bytes.Buffer of its own
// grew four times per upgrade, some 450 bytes of garbage each, which a
// server taking a million connections gives its collector.
var upgradeHeads = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 512)) }}

// maxPooledHead bounds the buffers upgradeHeads keeps: a response with a
// large header (cookies) is not held on to.
const maxPooledHead = 4 << 10

// upgradeHead returns the 101 response with header h, in a buffer from
// upgradeHeads.
func upgradeHead(h http.Header) *bytes.Buffer {
	head := upgradeHeads.Get().(*bytes.Buffer)
	head.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	h.Write(head)
	head.WriteString("\r\n")
	return head
}

// putUpgradeHead gives head back to upgradeHeads, unless it grew large.
func putUpgradeHead(head *bytes.Buffer) {
	if head.Cap() > maxPooledHead {
		return
	}
	head.Reset()
	upgradeHeads.Put(head)
}

// switchTo writes head, the response's, and hands the connection to p
// on its loop: Upgrade's work, which EventStream shares with a 200 head.
// It runs on the handler's goroutine.
func (r *response) switchTo(head []byte, p Protocol) (*engine.Conn, error) {
	switch {
	case r.hijacked:
		return nil, http.ErrHijacked
	case r.wroteHeader || r.committed:
		return nil, errors.New("httpd: Upgrade after the response began")
	case !r.ex.bodyDone.Load():
		return nil, errors.New("httpd: Upgrade of a request with a body left unread")
	}
	r.hijacked = true
	c := r.c
	// The Context becomes the caller's, nil until set: the loop finds c
	// in the slot until switchTo puts p there.
	connslot.Set(c.ec, c)
	if _, err := c.ec.Write(head); err != nil {
		return nil, err
	}
	if err := c.ec.Execute(func(*engine.Conn) { c.switchTo(p) }); err != nil {
		return nil, err
	}
	return c.ec, nil
}

// AfterHandler arranges for f to run once the handler that w answers for
// has returned, on its goroutine, and reports whether it could: false
// when w is not a loop-served response (see ErrNotLoop). It must be
// called by that handler; f must not block.
//
// The request's context is canceled at the handler's return too, but
// also before it, when the client's end comes first. A protocol that
// holds its callbacks until the handler that upgraded the connection has
// set it up (as websocket's Upgrader does) waits for f instead.
func AfterHandler(w http.ResponseWriter, f func()) bool {
	r := loopResponse(w)
	if r == nil {
		return false
	}
	r.ex.after = append(r.ex.after, f)
	return true
}

// loopResponse finds the loop-served response behind w, looking through
// wrappers that have an Unwrap method (as http.ResponseController does).
func loopResponse(w http.ResponseWriter) *response {
	for {
		switch t := w.(type) {
		case *response:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// switchTo hands the connection to p. It runs on the loop.
func (c *conn) switchTo(p Protocol) {
	c.proto = p
	c.ec.SetDeadline(time.Time{}) // the server's header, read and idle timeouts are HTTP's
	c.s.setState(c, http.StateHijacked)
	if !c.eof {
		// The protocol routes the connection from now on, and conn is
		// dropped: an upgraded connection holds nothing of HTTP's. (One
		// whose client's stream already ended keeps it, for OnData to
		// deliver that end after the held input.) The slot, not the
		// Context, which is the caller's to set once Upgrade returned.
		c.s.upgraded(c)
		connslot.Set(c.ec, p)
	}
	if c.held {
		// The server paused reading while the handler ran; the protocol
		// reads from now on. Posted before OnOpen, so that a PauseRead of
		// OnOpen's comes after it and holds.
		c.held = false
		c.ec.ResumeRead()
	}
	p.OnOpen(c.ec)
	c.ec.Wake() // OnData, with the input held meanwhile (and the end of the client's stream, if it came: see OnData)
}
