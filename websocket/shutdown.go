package websocket

import (
	"context"
	"sync"
)

// liveSet holds the connections an Upgrader made that have not closed,
// for Upgrader.Shutdown. Its methods are safe from any goroutine.
type liveSet struct {
	mu      sync.Mutex
	conns   connSet    // tracked from before the switch to OnClose; under mu
	closing bool       // Shutdown began: arrivals are told to go; under mu
	code    StatusCode // what they are told; set with closing
	reason  string
	empty   chan struct{} // made by Shutdown, closed once conns is empty; under mu
}

// track adds c, before its upgrade may give it a callback.
func (s *liveSet) track(c *Conn) {
	s.mu.Lock()
	s.conns.add(c)
	s.mu.Unlock()
}

// untrack removes c: it closed, or its upgrade failed.
func (s *liveSet) untrack(c *Conn) {
	s.mu.Lock()
	s.conns.remove(c)
	if s.closing && s.conns.len() == 0 && s.empty != nil {
		close(s.empty)
		s.empty = nil
	}
	s.mu.Unlock()
}

// arrived is called once c's engine connection is known (c.ec() is set):
// a connection whose upgrade ended after Shutdown began is told to go.
func (s *liveSet) arrived(c *Conn) {
	s.mu.Lock()
	closing, code, reason := s.closing, s.code, s.reason
	s.mu.Unlock()
	if closing {
		c.Close(code, reason) // ErrCloseSent if Shutdown's loop was first
	}
}

// begin starts the shutdown and returns the connections to tell, and a
// channel closed once none is left.
func (s *liveSet) begin(code StatusCode, reason string) ([]*Conn, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closing {
		s.closing, s.code, s.reason = true, code, reason
		s.empty = make(chan struct{})
	}
	done := s.empty
	if s.conns.len() == 0 && done != nil {
		close(done)
		s.empty = nil
	}
	if done == nil { // emptied already
		c := make(chan struct{})
		close(c)
		done = c
	}
	return s.conns.appendTo(make([]*Conn, 0, s.conns.len())), done
}

// Shutdown says goodbye to every connection u has upgraded: each one that
// has not begun closing is sent a close frame with code and reason (as
// Conn.Close does: the closing handshake, bounded by Options.CloseTimeout),
// and so is every connection whose upgrade ends from now on; u stays
// usable, but its connections are told to go as soon as they open.
// Shutdown then waits until all of them have closed, or ctx is done, and
// returns ctx's error in that case (the connections are left to their
// closing handshakes). A second call waits too, and uses the first one's
// code and reason. Safe from any goroutine.
//
// For a restart, StatusServiceRestart (1012) tells clients to reconnect,
// which reaches the new process; StatusGoingAway (1001) says the server is
// going down. On an httpd.Server, whose Shutdown waits for upgraded
// connections to close, register it:
//
//	srv.RegisterOnShutdown(func() {
//		u.Shutdown(context.Background(), websocket.StatusServiceRestart, "restart")
//	})
//
// the wait being bounded by CloseTimeout, and the server's Shutdown by its
// own context. On a net/http server, whose Shutdown does not wait for
// hijacked connections, call it after the server's Shutdown returns.
func (u *Upgrader) Shutdown(ctx context.Context, code StatusCode, reason string) error {
	if !code.sendable() {
		return errInvalidClose
	}
	u.init()
	conns, done := u.cfg.live.begin(code, reason)
	for _, c := range conns {
		if c.ec() != nil { // else arrived tells it
			c.Close(code, reason)
		}
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// init makes u's configuration, once.
func (u *Upgrader) init() {
	u.once.Do(func() {
		u.cfg = newConfig(u.Options)
		u.cfg.live = new(liveSet)
	})
}
