package websocket

import (
	"time"

	"github.com/galeio/gale/engine"
)

// Keepalive (Options.PingInterval, Options.PongTimeout).
//
// It runs on the connection's read deadline, a timer of its loop's heap:
// no goroutine and no runtime timer per connection. The engine clears a
// read deadline once OnData consumed what came, so each receive re-arms
// it at PingInterval from then (rearmKeepalive); when it passes, the
// peer sent nothing for PingInterval, and a ping goes out with the
// deadline re-armed at PongTimeout (rd.pinged set). When that one passes
// too, the peer sent nothing at all, pong or other, in answer: the
// connection is cut (keepaliveExpired).
//
// The close handshake owns the same deadline (startCloseWait): from the
// moment it begins (closeWait) keepalive stands aside. A re-arm posted by
// a receive just before the handshake began runs before the close's own
// (Close posts its startCloseWait, which posts the deadline in turn), so
// the close's deadline is the one that stays.

// keepalive reports whether c pings its peer.
func (c *Conn) keepalive() bool { return c.cfg.PingInterval > 0 }

// startKeepalive arms the first ping, as the connection opens. It runs
// on the loop.
func (c *Conn) startKeepalive() {
	if c.keepalive() {
		c.ec().SetReadDeadline(time.Now().Add(c.cfg.PingInterval))
	}
}

// rearmKeepalive notes that the peer sent something: the next ping is
// due PingInterval from now, and the pong awaited, if any, is no longer.
// It runs on the loop, in OnData, before the close handshake begins.
func (c *Conn) rearmKeepalive() {
	c.rd.pinged = false
	c.ec().SetReadDeadline(time.Now().Add(c.cfg.PingInterval))
}

// keepaliveExpired handles the read deadline of a connection that pings:
// the first time, the peer was silent for PingInterval and is pinged;
// the second, it did not answer within PongTimeout, and the connection
// is cut, with no close frame (see Options.PongTimeout). It runs on the
// loop.
func (c *Conn) keepaliveExpired(ec *engine.Conn) engine.Action {
	if !c.rd.pinged {
		if c.writeControl(PingMessage, nil) != nil {
			return engine.None // closing: the close handshake sets its own deadline
		}
		c.rd.pinged = true
		ec.SetReadDeadline(time.Now().Add(c.cfg.PongTimeout))
		return engine.None
	}
	c.setCloseErr(ErrPongTimeout)
	ec.Abort()
	return engine.None
}
