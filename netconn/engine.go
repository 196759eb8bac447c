package netconn

import (
	"errors"
	"fmt"
	"net"

	"github.com/galeio/gale/engine"
)

// errNotStream refuses to move a connection that is no stream (UDP).
var errNotStream = fmt.Errorf("netconn: not a stream connection: %w", errors.ErrUnsupported)

// Hand-overs between package engine, where a loop serves a connection with
// callbacks, and netconn, where a goroutine reads and writes it blocking:
// a server that gives each connection a goroutine while few are open and
// serves the rest with callbacks, or an upgrade (a hijacked HTTP
// connection). In both directions the descriptor moves (a duplicate is
// taken and the old owner's closed), and the bytes the old owner received
// and did not consume go before the socket's: the new owner sees the
// stream whole, none lost or repeated.

// FromEngine takes c off its engine and returns it as a *Conn, served by
// netconn's loops of the backend c's engine was asked for
// (engine.Engine.Backend; for backend.Auto, what Auto picks for netconn:
// epoll on Linux).
// c's queued output is written first; OnClose then runs for c with
// engine.ErrDetached. The bytes c received that OnData left unconsumed
// are what Read returns first, followed by the socket's; called from
// OnData, FromEngine takes the ones that call's Inbound still holds.
//
// FromEngine waits for c's loop, and so follows engine.Conn.Detach's
// rules for callbacks: where it would have to wait (output queued, a
// receive pending, on io_uring in OnData, another loop's callback) it
// returns engine.ErrDetachBusy and c goes on as before. Call it from
// another goroutine then, and have OnData leave the bytes that arrive
// meanwhile unconsumed: they go over too. Only TCP and Unix stream
// connections move; a connection of another network stays with its
// engine, and the error matches errors.ErrUnsupported. If the move fails
// once c has left its engine, the connection is closed.
func FromEngine(c *engine.Conn) (*Conn, error) {
	var network string
	if a := c.LocalAddr(); a != nil {
		network = a.Network()
	}
	if !isStream(network) {
		return nil, &net.OpError{Op: "detach", Net: network, Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errNotStream}
	}
	nc, input, err := c.DetachInput()
	if err != nil {
		return nil, err
	}
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	conn, err := adopt(nc, network, c.Engine().Backend(), input)
	if err != nil {
		return nil, &net.OpError{Op: "detach", Net: network, Source: laddr, Addr: raddr, Err: err}
	}
	return conn, nil
}

// ToEngine moves c onto e, which serves it from then on as a connection
// it adopted (engine.Engine.AdoptInput): OnOpen runs, then OnData gets
// first the bytes c received ahead of Read, then what arrives afterwards.
// c is closed: its methods fail with net.ErrClosed from then on. OnOpen,
// and OnData, may run before ToEngine returns: a value they need is given
// with ToEngineWith, not set with SetContext once ToEngine returned.
//
// A Read in progress on c is waited for: ToEngine returns only after it
// did (with the bytes it got, at its deadline, or for Close), so call it
// from the goroutine that reads, between Reads, or make the Read return.
// No Write may be in progress: one would end like a Write cut by Close,
// having sent part of its bytes. Deadlines do not carry over. ToEngine
// waits for netconn's loop, never for e's, so it may be called from any
// goroutine, e's callbacks included. If the move fails, c is closed, and
// the bytes it held go with it.
func (c *Conn) ToEngine(e *engine.Engine) (*engine.Conn, error) {
	return c.ToEngineWith(e, engine.Adoption{})
}

// ToEngineWith is ToEngine with more said about the connection, as
// engine.Engine.AdoptWith's Adoption says it: a.Context is its Context
// from the start, so that OnOpen can read it; a.Input, bytes the caller
// read from c and hands over, goes to OnData before those c received
// ahead of Read; a.TLS or a.ClientTLS begins TLS on the connection (a
// STARTTLS), which fails, closing c, if c holds bytes received ahead of
// Read or a.Input has some.
func (c *Conn) ToEngineWith(e *engine.Engine, a engine.Adoption) (*engine.Conn, error) {
	b, err := c.takeBuffered()
	if err != nil {
		return nil, err
	}
	if len(b) > 0 {
		a.Input = append(a.Input[:len(a.Input):len(a.Input)], b...)
	}
	ec, err := e.AdoptWith(c, a)
	if err != nil {
		c.Close() // a failure before the engine took the descriptor leaves c open
		return nil, err
	}
	return ec, nil
}

// isStream reports whether network is one of a *Conn's.
func isStream(network string) bool {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
		return true
	}
	return false
}
