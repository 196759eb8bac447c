package httpd

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/galeio/gale/engine"
)

// ServeConn serves nc, a connection accepted elsewhere, on the loops as
// Serve serves the connections it accepts; input is what was read from nc
// already (the start of its next request), which is served first. It is
// how a new process takes an idle keep-alive connection over from the
// one it replaces (see HandOff, and package restart's ReadyWith), and it
// returns at once. nc must expose its descriptor (a *net.TCPConn or
// *net.UnixConn); it is plain HTTP/1.x, which has served a request:
// neither TLS nor a PROXY header is read from it. Its requests' base
// context is context.Background() (BaseContext takes a listener, and
// there is none), then ConnContext's, as for any other. It fails with
// ErrServerClosed once Shutdown or Close began; nc is closed on any
// error.
func (s *Server) ServeConn(nc net.Conn, input []byte) error {
	if err := s.start(); err != nil {
		nc.Close()
		return err
	}
	c := s.newConn(context.Background()) // no listener to give BaseContext; ConnContext applies
	c.served = true                      // a keep-alive connection between requests: no h2c preface
	s.open.Add(1)
	if _, err := s.eng.AdoptWith(nc, engine.Adoption{Input: input, Context: c}); err != nil {
		s.open.Add(-1)
		nc.Close()
		if errors.Is(err, engine.ErrEngineStopped) {
			return ErrServerClosed
		}
		return err
	}
	return nil
}

// handsOff reports whether Shutdown hands c over (HandOff) instead of
// closing it: an idle HTTP/1.x connection between requests, which has
// served one, in the clear, whose address is its socket's. It runs on
// c's loop.
func (c *conn) handsOff() bool {
	s := c.s
	return s.HandOff != nil && c.proto == nil && c.tls == nil && c.served && !c.inHead &&
		!c.eof && s.ProxyProtocol == nil && c.state.Load() == stIdle
}

// handOffIdle takes c, idle, off its loop and gives it to HandOff, with
// what the loop received and did not consume. From the decision on, the
// loop consumes nothing more of it (handing): bytes that come meanwhile
// go over with the socket. It runs on c's loop; the detach runs on a
// goroutine, since a loop cannot wait for itself.
func (c *conn) handOffIdle() {
	c.handing = true
	c.quit.Store(true)
	s := c.s
	s.handOffs.Add(1)
	go func() {
		defer s.handOffs.Add(-1)
		nc, input, err := c.ec.DetachInput()
		if err != nil {
			c.ec.Close()
			return
		}
		s.setState(c, http.StateClosed) // this server's part is over
		if err := s.HandOff(nc, input); err != nil {
			nc.Close() // no one took it (no successor, say): closed as without HandOff
		}
	}()
}

// mayHandOff reports whether Shutdown may hand c over once it is idle:
// HandOff is set, and c is in the clear with its socket's address. Any
// goroutine (c.tls is set before c's first request).
func (c *conn) mayHandOff() bool {
	return c.s.HandOff != nil && c.tls == nil && c.s.ProxyProtocol == nil
}

// keepAlive reports whether c's response keeps the connection open: as
// the server allows, and during Shutdown for a connection to be handed
// over rather than closed.
func (c *conn) keepAlive() bool {
	s := c.s
	return s.keepAlives() || s.shutting.Load() && !s.disableKA.Load() && c.mayHandOff()
}

// handOffSoon hands c over from its loop if it is still idle there: a
// connection whose response ended during Shutdown, before its client's
// next request (which the loop serves if it came first; the hand-over is
// tried again when it ends).
func (c *conn) handOffSoon() {
	if c.mayHandOff() {
		c.ec.Execute(func(*engine.Conn) {
			if !c.handing && c.handsOff() {
				c.handOffIdle()
			}
		})
	}
}
