package websocket

import (
	"context"
	"net/http"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// Callbacks that wait for the HTTP handler.
//
// The gorilla (and nbio) habit is to set a connection's value once
// Upgrade returned it: c, _ := u.Upgrade(w, r, nil); c.SetContext(v).
// The connection is live on its loop by then, so without more its OnOpen,
// and OnMessage for a client that writes at once, could run before
// SetContext and find no value (some connections in a few hundred did,
// nearly all with a handler that took a moment to find v). So a
// connection that Upgrade returns holds its callbacks until the handler
// calls SetContext or returns, whichever comes first: whatever the
// handler set up by then is there for OnOpen.
//
// Meanwhile the loop keeps what comes: OnOpen, reached on the loop,
// parks (the hold becomes holdParked); input is left unconsumed and
// reading paused, and the end of the peer's stream is noted, not acted
// on (parked). The release posts OnOpen to the loop, which then delivers
// what waited, in order. A connection that ends while held (the
// handler's own CloseNow, an idle timeout, the engine stopping) is let
// go by its loop: its OnOpen and OnClose run at the release, on a
// goroutine of their own, in that order, so that a Conn that Upgrade
// returned gets both.
//
// httpd.Server tells the handler's return (httpd.AfterHandler). On
// net/http's the request's context does: it is canceled then, but also
// when the server sees the client's end before the Hijack, which would
// let the callbacks begin too early; so a context done once the
// connection is hijacked fails the upgrade (the client went), and after
// the Hijack only the handler's return cancels it.
//
// UpgradeWith's connections and the Dialer's hold nothing: their value
// is set before they are live.

// The states of Conn.hold, under wmu.
const (
	holdNone   uint8 = iota // callbacks run as they come
	holdShut                // they wait for SetContext or the handler's return
	holdParked              // they wait, and OnOpen reached the loop: the release posts it
	holdEnded               // they wait, and the connection ended: the release runs OnOpen and OnClose
)

// What came while the callbacks waited (Conn.parked, loop-owned).
const (
	parkedInput uint8 = 1 << iota // input left unconsumed, reading paused
	parkedEOF                     // the peer's stream ended
)

// holdFor holds c's callbacks until SetContext, or until the handler
// that w and r are the response and request of returns. A request whose
// context is never canceled cannot say when that is on net/http's
// server: c then holds nothing. c is not yet shared.
func (c *Conn) holdFor(w http.ResponseWriter, r *http.Request) {
	c.hold = holdShut
	if httpd.AfterHandler(w, c.release) {
		return
	}
	ctx := r.Context()
	if ctx.Done() == nil {
		c.hold = holdNone
		return
	}
	context.AfterFunc(ctx, c.release)
}

// park reports whether c's callbacks wait, and if so notes that OnOpen
// reached the loop, for the release to post. It runs on the loop.
func (c *Conn) park() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.hold == holdShut {
		c.hold = holdParked
		return true
	}
	return false
}

// release lets c's callbacks begin, if they wait.
func (c *Conn) release() {
	c.wmu.Lock()
	h := c.hold
	c.hold = holdNone
	c.wmu.Unlock()
	c.resume(h)
}

// resume does what the end of hold h requires: posting OnOpen to the
// loop, or running OnOpen and OnClose of a connection the loop let go.
// It never runs a callback on the caller's goroutine.
func (c *Conn) resume(h uint8) {
	switch h {
	case holdParked:
		// Not run if the connection closes first: OnClose then runs
		// OnOpen before the handler's OnClose.
		c.ec().Execute(c.openParked)
	case holdEnded:
		go c.openEnded()
	}
}

// openParked runs OnOpen, then has the loop deliver what waited: the
// input, then the end of the peer's stream. It runs on the loop.
func (c *Conn) openParked(ec *engine.Conn) {
	defer ec.Recover(c.panickedOpen)
	c.open()
	c.startKeepalive()
	p := c.parked
	c.parked = 0
	if p&parkedInput != 0 {
		if p&parkedEOF == 0 {
			ec.ResumeRead()
		}
		ec.Wake()
	}
	if p&parkedEOF != 0 {
		ec.Execute(c.endParked) // after the Wake's OnData
	}
}

// endParked acts on the end of the peer's stream that came while the
// callbacks waited, as OnEOF would have. It runs on the loop.
func (c *Conn) endParked(ec *engine.Conn) {
	c.rd.eof = true
	c.startCloseWait()
	ec.Close()
}

// openEnded runs OnOpen and OnClose for a connection that ended while its
// callbacks waited, once they may run. Its loop has let it go, and
// nothing else runs for it.
func (c *Conn) openEnded() {
	defer c.ec().Recover(nil) // its own goroutine: a panic is only logged
	c.open()
	c.cfg.stats.closed(c.rare.Load().closeErr)
	c.callClose(c.rare.Load().closeErr)
}
