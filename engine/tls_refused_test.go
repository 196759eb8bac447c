package engine_test

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// The tests of this file check handshakes the engine's TLS refuses, or
// that its peer refuses: the reason must reach OnClose or DialTLS.

// etRefusals are handshakes a server refuses, set up on a server and a
// client configuration.
var etRefusals = []struct {
	name           string
	server, client func(*tls.Config)
	want           string // in the refusing server's error
}{
	{"ALPN",
		func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} },
		func(c *tls.Config) { c.NextProtos = []string{"h2"} },
		"application protocol"},
	{"version",
		func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 },
		func(c *tls.Config) { c.MaxVersion = tls.VersionTLS12 },
		"version"},
	{"suite",
		goSuite{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}.pinFunc(),
		goSuite{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256}.pinFunc(),
		"cipher suite"},
}

func (s goSuite) pinFunc() func(*tls.Config) { return func(c *tls.Config) { s.pin(c) } }

// etRefusalRounds is how often the tests of refusals followed by the
// peer's close repeat each: which of the two reaches the loop first
// varies from run to run.
const etRefusalRounds = 20

// TestTLSRefused: the engine's server refuses a crypto/tls client's
// handshake; the client's handshake fails with the server's alert, and
// the server's OnClose says why, without an OnOpen. The client then waits
// for the server to close.
func TestTLSRefused(t *testing.T) { backendtest.Run(t, testTLSRefused) }

func testTLSRefused(t *testing.T) {
	p := tlstest.Get()
	for _, r := range etRefusals {
		t.Run(r.name, func(t *testing.T) {
			h := etEchoHandler()
			cfg := p.ServerConfig()
			r.server(cfg)
			_, a := etServeTLS(t, h, engine.Options{}, cfg)
			nc := etDial(t, a)
			ccfg := p.ClientConfig()
			r.client(ccfg)
			c := tls.Client(nc, ccfg)
			c.SetDeadline(time.Now().Add(etWait))
			if err := c.Handshake(); err == nil || !strings.Contains(err.Error(), "remote error") {
				t.Errorf("client handshake: %v, want the server's alert", err)
			}
			ev := etClosed(t, h)
			if ev.err == nil || !strings.Contains(ev.err.Error(), r.want) {
				t.Errorf("OnClose: %v, want an error about %s", ev.err, r.want)
			}
			etNoEvent(t, h.opened, "OnOpen")
			if n, err := nc.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("client read after the refusal: %d, %v; want io.EOF", n, err)
			}
		})
	}
}

// TestTLSRefusedThenClosed: as TestTLSRefused, but the client closes its
// socket as soon as its handshake has failed, as OpenSSL's s_client and
// most clients do. The end of the stream follows the refusal; OnClose
// must still give the refusal's reason.
func TestTLSRefusedThenClosed(t *testing.T) { backendtest.Run(t, testTLSRefusedThenClosed) }

func testTLSRefusedThenClosed(t *testing.T) {
	p := tlstest.Get()
	for _, r := range etRefusals {
		t.Run(r.name, func(t *testing.T) {
			h := etEchoHandler()
			cfg := p.ServerConfig()
			r.server(cfg)
			_, a := etServeTLS(t, h, engine.Options{}, cfg)
			ccfg := p.ClientConfig()
			r.client(ccfg)
			wrong := 0
			for i := range etRefusalRounds {
				if _, err := tls.DialWithDialer(&net.Dialer{Timeout: etWait}, "tcp", a.String(), ccfg); err == nil {
					t.Fatalf("round %d: the client's handshake succeeded", i)
				}
				ev := etClosed(t, h)
				if ev.err == nil || !strings.Contains(ev.err.Error(), r.want) {
					if wrong == 0 {
						t.Errorf("round %d: OnClose: %v, want an error about %s", i, ev.err, r.want)
					}
					wrong++
				}
			}
			if wrong > 0 {
				t.Errorf("OnClose without the reason in %d of %d rounds", wrong, etRefusalRounds)
			}
			etNoEvent(t, h.opened, "OnOpen")
		})
	}
}

// TestTLSDialRefusedThenClosed: DialTLS to a crypto/tls server that
// refuses the handshake, sends its alert and closes: DialTLS must return
// the alert, whichever of it and the end of the stream the loop sees
// first.
func TestTLSDialRefusedThenClosed(t *testing.T) { backendtest.Run(t, testTLSDialRefusedThenClosed) }

func testTLSDialRefusedThenClosed(t *testing.T) {
	p := tlstest.Get()
	for _, r := range etRefusals {
		t.Run(r.name, func(t *testing.T) {
			cfg := p.ServerConfig()
			r.server(cfg)
			ln := etGoEchoServer(t, cfg) // closes each conn once its handshake fails
			e := etStart(t, etNewHandler(), engine.Options{})
			ccfg := p.ClientConfig()
			r.client(ccfg)
			wrong := 0
			for i := range etRefusalRounds {
				_, err := e.DialTLS("tcp", ln.Addr().String(), ccfg)
				if err == nil {
					t.Fatalf("round %d: DialTLS succeeded", i)
				}
				if !strings.Contains(err.Error(), "remote error") {
					if wrong == 0 {
						t.Errorf("round %d: DialTLS: %v, want the server's alert", i, err)
					}
					wrong++
				}
			}
			if wrong > 0 {
				t.Errorf("DialTLS without the alert in %d of %d rounds", wrong, etRefusalRounds)
			}
		})
	}
}
