package httpd

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/galeio/gale/engine"
)

// addConn registers c, unless the server is closing.
func (s *Server) addConn(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eng == nil || s.shutting.Load() && s.closed() {
		s.open.Add(-1)
		return false
	}
	s.conns.add(c)
	return true
}

// upgraded takes c out of the list: its connection was upgraded, and is
// counted until it closes (upgradedClosed).
func (s *Server) upgraded(c *conn) {
	s.mu.Lock()
	if s.conns.remove(c) {
		s.upgrades.Add(1)
	}
	s.mu.Unlock()
}

// upgradedClosed counts an upgraded connection's close.
func (s *Server) upgradedClosed() {
	s.upgrades.Add(-1)
	s.open.Add(-1)
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	if s.conns.remove(c) {
		s.open.Add(-1)
	}
	s.mu.Unlock()
}

// closed reports whether Close was called. s.mu is held.
func (s *Server) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Server) setState(c *conn, st http.ConnState) {
	if s.ConnState != nil {
		s.ConnState(c, st)
	}
}

// Shutdown stops the server gracefully, as net/http's does: it closes the
// listeners, then the idle connections, and waits for the others to
// finish their request and close (responses carry "Connection: close"
// from then on). It returns when none is left, or with ctx's error when
// ctx ends first, leaving those connections open (Close ends them).
// Hijacked connections are not waited for; connections switched to another
// protocol on their loop (Upgrade) are, until they close. RegisterOnShutdown's
// functions are called to deal with both (a WebSocket server says goodbye
// there: websocket's Upgrader.Shutdown sends each of its connections a
// close frame, 1012 for a restart, and they close within its
// CloseTimeout).
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutAt.CompareAndSwap(0, time.Now().UnixNano())
	s.shutting.Store(true)
	s.mu.Lock()
	s.closeListeners()
	for _, f := range s.onShut {
		go f()
	}
	stds := s.stds
	s.mu.Unlock()
	s.closeStreams()
	stdDone := make(chan error, len(stds))
	for _, std := range stds {
		go func() { stdDone <- std.srv.Shutdown(ctx) }()
	}
	poll := time.Millisecond
	t := time.NewTimer(poll)
	defer t.Stop()
	for {
		s.closeIdle()
		if s.loopConns() == 0 && s.upgrades.Load() == 0 && s.handOffs.Load() == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			poll = min(2*poll, 100*time.Millisecond)
			t.Reset(poll)
		}
	}
	for range stds {
		if err := <-stdDone; err != nil {
			return err
		}
	}
	s.stopEngine()
	return nil
}

// Close closes the listeners and every connection at once, as net/http's
// Close does; hijacked connections are left alone.
func (s *Server) Close() error {
	s.shutting.Store(true)
	s.mu.Lock()
	err := s.closeListeners()
	stds := s.stds
	conns := s.conns.all()
	s.mu.Unlock()
	for _, std := range stds {
		std.srv.Close()
	}
	for _, c := range conns {
		c.quit.Store(true)
		c.ec.Abort()
	}
	s.stopEngine()
	return err
}

// stopEngine stops the loops once no connection is left on them.
func (s *Server) stopEngine() {
	s.mu.Lock()
	e := s.eng
	s.mu.Unlock()
	if e == nil {
		return
	}
	s.closeOnce.Do(func() {
		e.Stop()
		s.pool.stop()
		s.mu.Lock()
		close(s.done)
		s.mu.Unlock()
	})
}

// closeListeners closes every listener being served. s.mu is held.
func (s *Server) closeListeners() error {
	var err error
	for l := range s.listeners {
		if cerr := (*l).Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return err
}

func (s *Server) loopConns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns.n
}

// newConnGrace is how long Shutdown lets a connection that has sent no
// request yet send its first: net/http's (closeIdleConns), since a
// client's Transport retries a request on a reused connection the server
// closed, not on a new one.
const newConnGrace = 5 * time.Second

// closeIdle closes the loop-served connections that wait for a request
// and have received none of its bytes; a new one that has sent none yet,
// once newConnGrace has passed since the shutdown began.
func (s *Server) closeIdle() {
	s.mu.Lock()
	conns := s.conns.all()
	s.mu.Unlock()
	graceOver := time.Since(time.Unix(0, s.shutAt.Load())) > newConnGrace
	for _, c := range conns {
		c.ec.Execute(func(*engine.Conn) {
			if h, ok := c.proto.(*h2conn); ok {
				h.shutdown() // GOAWAY; it closes once its streams end
				return
			}
			switch {
			case c.handing:
			case c.handsOff():
				c.handOffIdle()
			case c.state.Load() == stIdle && !c.inHead && (c.served || graceOver):
				c.quit.Store(true)
				c.ec.Close()
			}
		})
	}
}

// The connection as the net.Conn that ConnState and ConnContext are
// given.

// Read fails: the loop reads the connection.
func (c *conn) Read([]byte) (int, error) { return 0, errLoopConn }

// Write writes to the connection, bypassing any response in progress.
func (c *conn) Write(p []byte) (int, error)        { return c.ec.Write(p) }
func (c *conn) Close() error                       { c.quit.Store(true); return c.ec.Close() }
func (c *conn) LocalAddr() net.Addr                { return c.ec.LocalAddr() }
func (c *conn) RemoteAddr() net.Addr               { return c.ec.RemoteAddr() }
func (c *conn) SetDeadline(t time.Time) error      { return c.ec.SetDeadline(t) }
func (c *conn) SetReadDeadline(t time.Time) error  { return c.ec.SetReadDeadline(t) }
func (c *conn) SetWriteDeadline(t time.Time) error { return c.ec.SetWriteDeadline(t) }
