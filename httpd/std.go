package httpd

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"sync"
)

// stdSide serves the connections of one listener that get a goroutine
// (ModeMixed below its threshold, and connections that are no socket)
// with net/http's own server, configured from the Server's fields.
type stdSide struct {
	s    *Server
	l    net.Listener
	base context.Context
	tls  *tls.Config

	once sync.Once
	srv  *http.Server
	ln   *chanListener
}

func (d *stdSide) serve(nc net.Conn) {
	d.once.Do(d.start)
	if d.tls != nil {
		nc = tls.Server(nc, d.tls)
	}
	d.s.open.Add(1)
	if !d.ln.offer(nc) {
		d.s.open.Add(-1)
		nc.Close()
	}
}

func (d *stdSide) start() {
	s := d.s
	d.ln = &chanListener{addr: d.l.Addr(), conns: make(chan net.Conn), done: make(chan struct{})}
	d.srv = &http.Server{
		Handler:           s.Handler,
		ReadTimeout:       s.ReadTimeout,
		ReadHeaderTimeout: s.ReadHeaderTimeout,
		WriteTimeout:      s.WriteTimeout,
		IdleTimeout:       s.IdleTimeout,
		MaxHeaderBytes:    s.MaxHeaderBytes,
		ErrorLog:          s.ErrorLog,
		ConnContext:       s.ConnContext,
		BaseContext:       func(net.Listener) context.Context { return d.base },
		TLSNextProto:      map[string]func(*http.Server, *tls.Conn, http.Handler){}, // HTTP/1 only
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateClosed || st == http.StateHijacked {
				s.open.Add(-1)
			}
			if s.ConnState != nil {
				s.ConnState(c, st)
			}
		},
	}
	if s.disableKA.Load() {
		d.srv.SetKeepAlivesEnabled(false)
	}
	s.mu.Lock()
	s.stds = append(s.stds, d)
	s.mu.Unlock()
	go d.srv.Serve(d.ln)
}

func (d *stdSide) close() {
	if d.ln != nil {
		d.ln.Close()
	}
}

// chanListener is the net.Listener net/http's server accepts from: the
// connections the Server's own accept loop gives it.
type chanListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) offer(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

var errLoopConn = errors.New("httpd: the connection is read by its loop")
