package aio_test

// The server of the fault tests (faults_*_test.go): an echo server on a
// watcher. Their clients check their echo (internal/testkit/faulttest,
// driven by internal/testkit/stresstest).

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// fsServer is the echo server of the fault tests: connections delegated
// to a watcher with their first read (accepted with package net, or
// handed to serve), echoed with writes of copies. A request that fails
// has its error recorded and its connection freed, except when the
// delegation itself failed: the caller's conn is then still open, and
// the test may hand it over again. Completions of requests the test made
// itself (with a context other than the server's) go to other.
type fsServer struct {
	w     *aio.Watcher
	addr  net.Addr // with startFSServer
	user  bool     // reads into the server's own buffers, else the swap buffer
	other chan result

	mu   sync.Mutex
	errs map[string]error // the first error of each connection, by peer address
}

// fsConn is a connection's request context.
type fsConn struct{ buf []byte }

// newFSServer starts an fsServer on a watcher configured by cfg, without
// a listener; everything stops at cleanup.
func newFSServer(t testing.TB, cfg aio.Config, user bool) *fsServer {
	t.Helper()
	s := &fsServer{w: newWatcher(t, cfg), user: user, errs: map[string]error{}, other: make(chan result, 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.loop()
	}()
	t.Cleanup(func() {
		s.w.Close()
		<-done
	})
	return s
}

// startFSServer starts an fsServer that accepts on 127.0.0.1.
func startFSServer(t testing.TB, user bool) *fsServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v", err)
	}
	s := newFSServer(t, aio.Config{}, user)
	s.addr = ln.Addr()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.accept(ln)
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return s
}

// serve delegates c with its first read; a failure to submit is
// returned (a failed delegation is recorded as the connection's error).
func (s *fsServer) serve(c net.Conn) error {
	ctx := &fsConn{}
	if s.user {
		ctx.buf = make([]byte, 16<<10)
	}
	return s.w.Read(ctx, c, ctx.buf)
}

func (s *fsServer) accept(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if s.serve(c) != nil {
			c.Close()
		}
	}
}

func (s *fsServer) loop() {
	for {
		rs, err := s.w.WaitIO()
		if err != nil {
			return
		}
		for _, r := range rs {
			ctx, ok := r.Context.(*fsConn)
			if !ok {
				s.other <- copyResult(r)
				continue
			}
			switch {
			case r.Error != nil:
				s.failed(r)
			case r.Operation == aio.OpRead:
				s.w.Write(ctx, r.Conn, bytes.Clone(r.Buffer[:r.Size]))
			default:
				s.w.Read(ctx, r.Conn, ctx.buf)
			}
		}
	}
}

// next returns the next completion of a request the test made itself.
func (s *fsServer) next(t testing.TB) result {
	t.Helper()
	select {
	case r := <-s.other:
		return r
	case <-time.After(waitTimeout):
		t.Fatalf("no completion within %v", waitTimeout)
		return result{}
	}
}

// failed records r's error, the first of its connection, and frees it.
func (s *fsServer) failed(r aio.OpResult) {
	key := r.Conn.RemoteAddr().String()
	s.mu.Lock()
	if s.errs[key] == nil {
		s.errs[key] = fmt.Errorf("%v: %w", r.Operation, r.Error)
	}
	s.mu.Unlock()
	if oe := (*net.OpError)(nil); errors.As(r.Error, &oe) && oe.Op == "dup" {
		return // not delegated: the caller's conn is untouched
	}
	s.w.Free(r.Conn)
}

// forget drops the error recorded for the connection from peer.
func (s *fsServer) forget(peer net.Conn) {
	s.mu.Lock()
	delete(s.errs, peer.LocalAddr().String())
	s.mu.Unlock()
}

// errOf returns the first error of the connection from peer.
func (s *fsServer) errOf(peer net.Conn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.errs[peer.LocalAddr().String()]
}

// errCount returns how many connections failed.
func (s *fsServer) errCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.errs)
}
