package netconn_test

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// ctxHandler is a handler that also reports the Context its OnOpen finds.
type ctxHandler struct {
	*handler
	ctx chan any
}

func (h ctxHandler) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	h.ctx <- c.Context()
	return h.handler.OnOpen(c)
}

// startCtxEngine starts an engine whose handler reports each OnOpen's
// Context, and whose OnData collects what it is given.
func startCtxEngine(t *testing.T) (*engine.Engine, ctxHandler, chan string) {
	t.Helper()
	h := ctxHandler{newHandler(), make(chan any, 8)}
	var got chan string
	h.data, got = collect()
	e, err := engine.New(h, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e, h, got
}

// TestToEngineWith checks that the Context given to ToEngineWith is there
// for OnOpen, which may run before ToEngineWith returns, and that its
// Input goes before the bytes c received ahead of Read.
func TestToEngineWith(t *testing.T) { forStreams(t, testToEngineWith) }

func testToEngineWith(t *testing.T, network string) {
	e, h, got := startCtxEngine(t)
	nc, peer := accepted(t, network)
	peer.Write([]byte("abc"))
	expect(t, nc, "a") // "bc" stays in nc, received ahead of Read
	ec, err := nc.ToEngineWith(e, engine.Adoption{Context: "state", Input: []byte("A")})
	if err != nil {
		t.Fatalf("ToEngineWith = %v", err)
	}
	if v := recv(t, h.ctx, "OnOpen"); v != "state" {
		t.Fatalf("Context in OnOpen = %v, want the Adoption's", v)
	}
	gather(t, got, "Abc")
	ec.Write([]byte("from the engine"))
	expect(t, peer, "from the engine")
}

// TestToEngineWithTLS moves a connection whose peer is about to begin
// TLS (a STARTTLS) to an engine that handshakes as its server, with a
// Context OnOpen finds; and checks that TLS with input to hand over is
// refused, closing the connection.
func TestToEngineWithTLS(t *testing.T) { forStreams(t, testToEngineWithTLS) }

func testToEngineWithTLS(t *testing.T, network string) {
	pki := tlstest.Get()
	t.Run("starttls", func(t *testing.T) {
		e, h, got := startCtxEngine(t)
		nc, peer := accepted(t, network)
		cfg := pki.ClientConfig()
		cfg.ServerName = "localhost"
		tc := tls.Client(peer, cfg)
		done := make(chan error, 1)
		go func() {
			_, err := tc.Write([]byte("secret"))
			done <- err
		}()
		if _, err := nc.ToEngineWith(e, engine.Adoption{TLS: pki.ServerConfig(), Context: "tls"}); err != nil {
			t.Fatalf("ToEngineWith(TLS) = %v", err)
		}
		if v := recv(t, h.ctx, "OnOpen"); v != "tls" {
			t.Fatalf("Context in OnOpen = %v, want the Adoption's", v)
		}
		if err := recv(t, done, "the client's handshake and write"); err != nil {
			t.Fatal(err)
		}
		gather(t, got, "secret")
	})
	t.Run("refused", func(t *testing.T) {
		e, _, _ := startCtxEngine(t)
		nc, _ := accepted(t, network)
		if _, err := nc.ToEngineWith(e, engine.Adoption{TLS: pki.ServerConfig(), Input: []byte("x")}); err == nil {
			t.Fatal("ToEngineWith(TLS, Input) succeeded, want an error")
		}
		if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after a failed ToEngineWith = %v, want net.ErrClosed", err)
		}
	})
}
