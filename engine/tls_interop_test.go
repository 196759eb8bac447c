package engine_test

import (
	"crypto/tls"
	"io"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// The tests of this file serve openssl s_client from the engine's
// ListenTLS: cipher suites, ALPN and SNI, client certificates, session
// resumption, KeyUpdate, close_notify, and the handshakes the server must
// refuse.

// sClient starts openssl s_client against the engine at a: it sends the
// server name "localhost" and verifies the server with the test CA,
// failing the handshake if that fails. Without -quiet among extra, it is
// interactive: it prints the session and the data it receives, sends
// what its input gives it, takes single-letter commands at the start of
// an input read, and sends close_notify and exits at the end of its
// input.
func sClient(t *testing.T, a net.Addr, f tlstest.Files, extra ...string) *osslProc {
	t.Helper()
	args := []string{"s_client", "-connect", a.String(), "-servername", "localhost",
		"-CAfile", f.CA, "-verify_return_error"}
	return startOpenSSL(t, append(args, extra...)...)
}

// etTLSStates makes h report the ConnectionState of each connection it
// opens.
func etTLSStates(h *etHandler) chan tls.ConnectionState {
	states := make(chan tls.ConnectionState, 16)
	h.open = func(c *engine.Conn) ([]byte, engine.Action) {
		st, _ := c.ConnectionState()
		states <- st
		return nil, engine.None
	}
	return states
}

// etEchoClosing echoes, and closes a connection once it echoed n bytes.
func etEchoClosing(n int) func(c *engine.Conn, in *engine.Inbound) engine.Action {
	return func(c *engine.Conn, in *engine.Inbound) engine.Action {
		echoed, _ := c.Context().(int)
		echoed += in.Len()
		c.SetContext(echoed)
		etEcho(c, in)
		if echoed >= n {
			return engine.Close
		}
		return engine.None
	}
}

// osslBulk is what TestTLSOpenSSLClientSuites sends: many records, some
// of them split across reads.
const osslBulk = 1 << 20

// TestTLSOpenSSLClientSuites: with each suite, a quiet s_client sends
// osslBulk bytes through the engine's echo server, which closes once it
// echoed them all; s_client must have printed them back and exited
// cleanly, and the server must have negotiated the suite.
func TestTLSOpenSSLClientSuites(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, s := range osslSuites {
			t.Run(s.String(), func(t *testing.T) { testOpenSSLClientSuite(t, f, s) })
		}
	})
}

func testOpenSSLClientSuite(t *testing.T, f tlstest.Files, s osslSuite) {
	h := etNewHandler()
	states := etTLSStates(h)
	h.data = etEchoClosing(osslBulk)
	_, a := etServeTLS(t, h, engine.Options{}, nil)
	p := sClient(t, a, f, append(s.args(), "-quiet")...)

	st := etRecv(t, states, "OnOpen's ConnectionState")
	if st.Version != s.version || st.CipherSuite != s.id || st.ServerName != "localhost" {
		t.Errorf("server negotiated %s, %s, SNI %q; want %s, %s, localhost", tls.VersionName(st.Version),
			tls.CipherSuiteName(st.CipherSuite), st.ServerName, tls.VersionName(s.version), tls.CipherSuiteName(s.id))
	}
	p.send(t, string(etPattern(osslBulk)))
	if err := p.wait(t); err != nil {
		t.Errorf("s_client: %v\n%s", err, p)
	}
	if got := []byte(p.out.String()); len(got) != osslBulk || etCheckPattern(got) >= 0 {
		t.Errorf("s_client printed %d bytes (first difference at %d), want the %d it sent", len(got), etCheckPattern(got), osslBulk)
	}
	if ev := etClosed(t, h); ev.err != nil {
		t.Errorf("OnClose after the server closed: %v, want nil", ev.err)
	}
}

// osslVersionName is OpenSSL's name of version v.
func osslVersionName(v uint16) string {
	if v == tls.VersionTLS13 {
		return "TLSv1.3"
	}
	return "TLSv1.2"
}

// TestTLSOpenSSLClientSession: an interactive s_client offers two ALPN
// protocols; the server chooses by its own order and sees the server
// name. Both ends report the session (s_client prints it), lines echo,
// and at the end of its input s_client's close_notify reaches OnClose as
// io.EOF.
func TestTLSOpenSSLClientSession(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, v := range tlsVersions {
			t.Run(tls.VersionName(v), func(t *testing.T) { testOpenSSLClientSession(t, f, v) })
		}
	})
}

func testOpenSSLClientSession(t *testing.T, f tlstest.Files, v uint16) {
	h := etEchoHandler()
	states := etTLSStates(h)
	cfg := tlstest.Get().ServerConfig()
	cfg.MaxVersion = v
	cfg.NextProtos = []string{"gale/1", "http/1.1"}
	_, a := etServeTLS(t, h, engine.Options{}, cfg)
	p := sClient(t, a, f, osslVersion(v), "-alpn", "http/1.1,gale/1")

	st := etRecv(t, states, "OnOpen's ConnectionState")
	if !st.HandshakeComplete || st.Version != v || st.NegotiatedProtocol != "gale/1" || st.ServerName != "localhost" {
		t.Errorf("server's ConnectionState: complete %v, %s, ALPN %q, SNI %q; want true, %s, gale/1, localhost",
			st.HandshakeComplete, tls.VersionName(st.Version), st.NegotiatedProtocol, st.ServerName, tls.VersionName(v))
	}
	// OpenSSL and crypto/tls name TLS 1.3's suites alike.
	suite := osslVersionName(v) + ", Cipher is "
	if v == tls.VersionTLS13 {
		suite += tls.CipherSuiteName(st.CipherSuite)
	}
	for _, want := range []string{"New, " + suite, "ALPN protocol: gale/1", "Verify return code: 0 (ok)"} {
		p.expect(t, p.out, want)
	}
	for _, line := range []string{"hello, engine\n", strings.Repeat("0123456789abcdef", 300) + "\n"} {
		p.send(t, line)
		p.expect(t, p.out, line)
	}
	p.stdin.Close()
	if ev := etClosed(t, h); ev.err != io.EOF {
		t.Errorf("OnClose after s_client's close_notify: %v, want io.EOF", ev.err)
	}
	if err := p.wait(t); err != nil {
		t.Errorf("s_client: %v\n%s", err, p)
	}
}

// TestTLSOpenSSLClientCertificate: a server that requires a client
// certificate gets s_client's, signed by the CA it trusts.
func TestTLSOpenSSLClientCertificate(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, v := range tlsVersions {
			t.Run(tls.VersionName(v), func(t *testing.T) {
				h := etEchoHandler()
				states := etTLSStates(h)
				cfg := tlstest.Get().ServerConfig()
				cfg.MaxVersion = v
				cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, tlstest.Get().Roots
				_, a := etServeTLS(t, h, engine.Options{}, cfg)
				p := sClient(t, a, f, osslVersion(v), "-cert", f.ClientCert, "-key", f.ClientKey)

				st := etRecv(t, states, "OnOpen's ConnectionState")
				// s_client sends the chain it built: the client's
				// certificate, then the CA's.
				if len(st.PeerCertificates) == 0 || st.PeerCertificates[0].Subject.CommonName != "gale test client" || len(st.VerifiedChains) != 1 {
					t.Errorf("server saw %d peer certificates, %d verified chains; want the client's, verified", len(st.PeerCertificates), len(st.VerifiedChains))
				}
				p.send(t, "authenticated\n")
				p.expect(t, p.out, "authenticated\n")
				p.stdin.Close()
				if err := p.wait(t); err != nil {
					t.Errorf("s_client: %v\n%s", err, p)
				}
				if ev := etClosed(t, h); ev.err != io.EOF {
					t.Errorf("OnClose: %v, want io.EOF", ev.err)
				}
			})
		}
	})
}

// TestTLSOpenSSLClientResumption: s_client saves the session of a first
// connection (-sess_out) and resumes it on a second (-sess_in); both ends
// must see the second resume, with a TLS 1.2 session ticket or a TLS 1.3
// PSK.
func TestTLSOpenSSLClientResumption(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, v := range tlsVersions {
			t.Run(tls.VersionName(v), func(t *testing.T) {
				h := etEchoHandler()
				states := etTLSStates(h)
				cfg := tlstest.Get().ServerConfig()
				cfg.MaxVersion = v
				_, a := etServeTLS(t, h, engine.Options{}, cfg)
				session := filepath.Join(backendtest.TempDir(t), "session.pem")
				for i, sess := range [][]string{{"-sess_out", session}, {"-sess_in", session}} {
					p := sClient(t, a, f, append(sess, osslVersion(v))...)
					st := etRecv(t, states, "OnOpen's ConnectionState")
					if st.DidResume != (i == 1) {
						t.Errorf("connection %d: server's DidResume %v, want %v", i+1, st.DidResume, i == 1)
					}
					// The echo comes after a TLS 1.3 ticket: s_client has it.
					p.send(t, "connection\n")
					p.expect(t, p.out, "connection\n")
					if i == 1 {
						p.expect(t, p.out, "Reused, "+osslVersionName(v))
					}
					p.stdin.Close()
					if err := p.wait(t); err != nil {
						t.Errorf("s_client %d: %v\n%s", i+1, err, p)
					}
					etClosed(t, h)
				}
			})
		}
	})
}

// osslKeyUpdate matches a KeyUpdate message in openssl's -msg trace, sent
// (>>>) or received (<<<), and its request_update byte: 1 asks the peer
// to update its keys too (RFC 8446 §4.6.3).
var osslKeyUpdate = regexp.MustCompile(`(?m)^(<<<|>>>) TLS 1\.3, Handshake \[length 0005\], KeyUpdate\s*\n\s*18 00 00 01 0([01])`)

// osslKeyUpdates lists the KeyUpdates of a -msg trace, as "<<< 1" or
// ">>> 0".
func osslKeyUpdates(trace string) []string {
	var list []string
	for _, m := range osslKeyUpdate.FindAllStringSubmatch(trace, -1) {
		list = append(list, m[1]+" "+m[2])
	}
	return list
}

// TestTLSOpenSSLClientKeyUpdate: s_client's command K updates its
// sending keys and asks the server to update its own, k updates only
// s_client's; lines echo before and after each, and Q ends with a
// close_notify. s_client's trace must show the server's one answer to K.
func TestTLSOpenSSLClientKeyUpdate(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		h := etEchoHandler()
		_, a := etServeTLS(t, h, engine.Options{}, nil)
		p := sClient(t, a, f, "-tls1_3", "-msg")
		etOpened(t, h)
		p.send(t, "before any update\n")
		p.expect(t, p.out, "before any update\n")
		keyUpdate := regexp.MustCompile("KEYUPDATE") // on stderr, unbuffered
		for i, cmd := range []string{"K", "k"} {
			p.send(t, cmd+"\n")
			p.expectCount(t, p.errOut, keyUpdate, i+1)
			line := "after " + cmd + "\n"
			p.send(t, line)
			p.expect(t, p.out, line)
		}
		p.send(t, "Q\n")
		if ev := etClosed(t, h); ev.err != io.EOF {
			t.Errorf("OnClose after s_client's close_notify: %v, want io.EOF", ev.err)
		}
		if err := p.wait(t); err != nil {
			t.Errorf("s_client: %v\n%s", err, p)
		}
		got := osslKeyUpdates(p.out.String())
		if want := []string{">>> 1", "<<< 0", ">>> 0"}; !slices.Equal(got, want) {
			t.Errorf("KeyUpdates in s_client's trace: %q, want %q (the server answers K, not k)", got, want)
		}
	})
}

// TestTLSOpenSSLClientRefused: handshakes the server must refuse, with
// the reason in OnClose and no OnOpen; s_client fails.
func TestTLSOpenSSLClientRefused(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	requireCert := func(c *tls.Config) {
		c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, tlstest.Get().Roots
	}
	cases := []struct {
		name   string
		server func(*tls.Config)
		client []string
		want   string // in OnClose's error
	}{
		{"ALPN", func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }, []string{"-alpn", "h2"}, "application protocol"},
		{"version", func(c *tls.Config) { c.MinVersion = tls.VersionTLS13 }, []string{"-tls1_2"}, "version"},
		{"suite", func(c *tls.Config) {
			c.CipherSuites = []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}
		}, []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"}, "cipher suite"},
		{"no client certificate TLS 1.2", requireCert, []string{"-tls1_2"}, "certificate"},
		{"no client certificate TLS 1.3", requireCert, []string{"-tls1_3"}, "certificate"},
		// The server's certificate is not for client authentication.
		{"wrong client certificate", requireCert, []string{"-cert", f.ServerCert, "-key", f.ServerKey}, "certificate"},
	}
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				h := etEchoHandler()
				cfg := tlstest.Get().ServerConfig()
				tc.server(cfg)
				_, a := etServeTLS(t, h, engine.Options{}, cfg)
				p := sClient(t, a, f, tc.client...)
				ev := etClosed(t, h)
				if ev.err == nil || !strings.Contains(ev.err.Error(), tc.want) {
					t.Errorf("OnClose: %v, want an error about %s", ev.err, tc.want)
				}
				etNoEvent(t, h.opened, "OnOpen")
				if err := p.wait(t); err == nil {
					t.Errorf("s_client succeeded\n%s", p)
				}
			})
		}
	})
}
