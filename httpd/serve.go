package httpd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

// serve is Serve, with TLS when cfg is not nil.
func (s *Server) serve(l net.Listener, cfg *tls.Config) error {
	defer l.Close()
	if err := s.start(); err != nil {
		return err
	}
	if !s.trackListener(&l, true) {
		return ErrServerClosed
	}
	defer s.trackListener(&l, false)
	base := context.Background()
	if s.BaseContext != nil {
		if base = s.BaseContext(l); base == nil {
			panic("httpd: BaseContext returned a nil context")
		}
	}
	side := &stdSide{s: s, l: l, base: base, tls: cfg}
	defer side.close()
	var delay time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.shutting.Load() {
				return ErrServerClosed
			}
			//lint:ignore SA1019 net/http's rule: EMFILE and the like pass
			if ne, ok := err.(net.Error); ok && ne.Temporary() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				s.logf("httpd: Accept error: %v; retrying in %v", err, delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.accepted(nc, cfg, base, side)
	}
}

// accepted serves nc: on a loop, or with net/http's goroutine when the
// mode says so or nc has no descriptor to give the engine.
func (s *Server) accepted(nc net.Conn, cfg *tls.Config, base context.Context, side *stdSide) {
	_, isSock := nc.(syscall.Conn)
	if !isSock || s.Mode == ModeMixed && int(s.open.Load()) < s.mixedThreshold() {
		side.serve(proxied(nc, s.ProxyProtocol))
		return
	}
	c := s.newConn(base)
	s.open.Add(1)
	_, err := s.eng.AdoptWith(nc, engine.Adoption{TLS: cfg, Context: c, Proxy: s.ProxyProtocol})
	if err != nil {
		s.open.Add(-1)
		nc.Close()
		s.logf("httpd: serving a connection: %v", err)
	}
}

func (s *Server) mixedThreshold() int {
	if s.MixedThreshold > 0 {
		return s.MixedThreshold
	}
	return DefaultMixedThreshold
}

// start makes the engine and the handler pool on first use.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutting.Load() {
		return ErrServerClosed
	}
	if s.eng != nil {
		return nil
	}
	o := s.Engine
	if o.Pool != nil {
		// The server's loop code (heads, bodies, upgrades) must run on
		// its loops: its handlers have their own goroutines, and an
		// upgraded WebSocket takes websocket.Options.Pool.
		return fmt.Errorf("httpd: Server.Engine.Pool: handlers run on goroutines of their own (a WebSocket's callbacks: websocket.Options.Pool): %w", errors.ErrUnsupported)
	}
	if o.ErrorLog == nil {
		o.ErrorLog = s.ErrorLog // the engine's panics (an upgraded WebSocket's handler) go with the server's
	}
	e, err := engine.New((*loopHandler)(s), o)
	if err != nil {
		return err
	}
	if err := e.Start(); err != nil {
		return err
	}
	s.eng = e
	s.h2 = s.h2Limits()
	s.pool = newPool(s.MaxHandlers)
	s.done = make(chan struct{})
	return nil
}

// trackListener adds or removes l from the listeners Shutdown closes,
// and reports false if the server is shutting down.
func (s *Server) trackListener(l *net.Listener, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.listeners == nil {
		s.listeners = make(map[*net.Listener]struct{})
	}
	if !add {
		delete(s.listeners, l)
		return true
	}
	if s.shutting.Load() {
		return false
	}
	s.listeners[l] = struct{}{}
	return true
}

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
		return
	}
	stdLogf(format, args...)
}
