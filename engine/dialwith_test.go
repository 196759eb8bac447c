package engine_test

import (
	"context"
	"crypto/tls"
	"io"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// seenCtx is what a callback found as its connection's Context.
type seenCtx struct {
	where string // "open" or "data"
	v     any
}

// ctxHandler reports the Context its connections' OnOpen and first
// OnData find; OnOpen sends "hi", which an echo server returns.
func ctxHandler() (*etHandler, chan seenCtx) {
	seen := make(chan seenCtx, 1024)
	h := etNewHandler()
	h.open = func(c *engine.Conn) ([]byte, engine.Action) {
		seen <- seenCtx{"open", c.Context()}
		return []byte("hi"), engine.None
	}
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if in.Len() < 2 {
			return engine.None
		}
		seen <- seenCtx{"data", c.Context()}
		in.Discard(in.Len())
		return engine.None
	}
	return h, seen
}

// expectCtx checks that n OnOpen and n OnData calls each saw a value of
// want's, every one of them once.
func expectCtx(t *testing.T, seen chan seenCtx, want map[any]bool) {
	t.Helper()
	got := map[string]map[any]bool{"open": {}, "data": {}}
	for range 2 * len(want) {
		s := etRecv(t, seen, "a callback")
		if !want[s.v] || got[s.where][s.v] {
			t.Fatalf("%s saw Context() = %v, want one of the values given, once", s.where, s.v)
		}
		got[s.where][s.v] = true
	}
}

// TestDialWith checks that a value given with DialWith's Adoption.Context
// is the connection's Context in its OnOpen and OnData, which may run
// before DialWith returns (SetContext afterwards could come too late):
// on each stream network, and with ClientTLS, whose handshake DialWith
// waits for; and that Input and TLS, which a dialed connection cannot
// have, are refused.
func TestDialWith(t *testing.T) { backendtest.Run(t, testDialWith) }

func testDialWith(t *testing.T) {
	const n = 50
	ctx, cancel := context.WithTimeout(context.Background(), etWait)
	defer cancel()
	etForStreams(t, func(t *testing.T, network string) {
		h, seen := ctxHandler()
		e := etStart(t, h, engine.Options{})
		a := etEchoServer(t, network)
		want := map[any]bool{}
		for i := range n {
			want[i] = true
			if _, err := e.DialWith(ctx, network, a.String(), engine.Adoption{Context: i}); err != nil {
				t.Fatalf("DialWith(%s, %s) = %v", network, a, err)
			}
		}
		expectCtx(t, seen, want)
	})
	t.Run("tls", func(t *testing.T) {
		h, seen := ctxHandler()
		e := etStart(t, h, engine.Options{})
		pki := tlstest.Get()
		ln, err := tls.Listen("tcp", "127.0.0.1:0", pki.ServerConfig())
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			io.CopyN(c, c, 2)
		}()
		c, err := e.DialWith(ctx, "tcp", ln.Addr().String(), engine.Adoption{ClientTLS: pki.ClientConfig(), Context: "tls"})
		if err != nil {
			t.Fatalf("DialWith(ClientTLS) = %v", err)
		}
		if st, ok := c.ConnectionState(); !ok || !st.HandshakeComplete {
			t.Fatalf("ConnectionState() after DialWith = %+v, %v; want a completed handshake", st, ok)
		}
		expectCtx(t, seen, map[any]bool{"tls": true})
	})
	t.Run("refused", func(t *testing.T) {
		e := etStart(t, etNewHandler(), engine.Options{})
		a := etEchoServer(t, "tcp")
		for _, ad := range []engine.Adoption{{Input: []byte("x")}, {TLS: &tls.Config{}}} {
			if c, err := e.DialWith(ctx, "tcp", a.String(), ad); err == nil {
				c.Close()
				t.Errorf("DialWith(%+v) succeeded, want an error", ad)
			}
		}
	})
}
