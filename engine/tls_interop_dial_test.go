package engine_test

import (
	"crypto/tls"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// The tests of this file dial openssl s_server with the engine's
// DialTLS: cipher suites, KeyUpdate from the server, close_notify, and a
// refused handshake.

// osslAccept is s_server's line that says where it listens.
var osslAccept = regexp.MustCompile(`(?m)^ACCEPT 127\.0\.0\.1:(\d+)\s*$`)

// sServer starts openssl s_server for one connection on a loopback port
// the kernel chooses (so that no port can be taken in between), with the
// test PKI's ECDSA certificate or, if rsa, its RSA one, and returns it
// and its address.
func sServer(t *testing.T, f tlstest.Files, rsa bool, extra ...string) (*osslProc, string) {
	t.Helper()
	cert, key := f.ServerCert, f.ServerKey
	if rsa {
		cert, key = f.RSACert, f.RSAKey
	}
	args := []string{"s_server", "-accept", "127.0.0.1:0", "-naccept", "1", "-cert", cert, "-key", key}
	p := startOpenSSL(t, append(args, extra...)...)
	var port string
	listening := p.out.await(func(s string) bool {
		if m := osslAccept.FindStringSubmatch(s); m != nil {
			port = m[1]
		}
		return port != ""
	}, p.exited)
	if !listening {
		t.Fatalf("s_server did not say where it listens\n%s", p)
	}
	return p, net.JoinHostPort("127.0.0.1", port)
}

// osslRevLines are the lines TestTLSDialOpenSSLServer sends: letters
// only, of lengths from 1 to about 4000 bytes (s_server -rev takes lines
// of up to 16 KiB).
func osslRevLines() []string {
	var lines []string
	for i := range 200 {
		b := make([]byte, 1+i*97%4000)
		for j := range b {
			b[j] = 'a' + byte((i+j*7)%26)
		}
		lines = append(lines, string(b)+"\n")
	}
	return lines
}

// reversed is line, a line of osslRevLines, as s_server -rev answers it.
func reversed(line string) string {
	b := []byte(strings.TrimSuffix(line, "\n"))
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b) + "\n"
}

// TestTLSDialOpenSSLServer: with each suite, DialTLS connects to s_server
// -rev, which answers each line reversed. The first lines go one per
// Write, the rest in one, over many records; then CLOSE makes s_server
// end the connection, and s_server exits cleanly.
func TestTLSDialOpenSSLServer(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, s := range osslSuites {
			t.Run(s.String(), func(t *testing.T) { testDialOpenSSLServer(t, f, s) })
		}
	})
}

func testDialOpenSSLServer(t *testing.T, f tlstest.Files, s osslSuite) {
	p, addr := sServer(t, f, s.rsa, append(s.args(), "-rev")...)
	got := newTextLog()
	h := etLogHandler(got)
	e := etStart(t, h, engine.Options{})
	cfg := goSuite{s.version, s.id}.pin(tlstest.Get().ClientConfig())
	if s.version == tls.VersionTLS13 {
		cfg.CipherSuites = nil // crypto/tls chooses; s_server has only s.
	}
	c, err := e.DialTLS("tcp", addr, cfg)
	if err != nil {
		t.Fatalf("DialTLS: %v\n%s", err, p)
	}
	st, _ := c.ConnectionState()
	if st.Version != s.version || st.CipherSuite != s.id {
		t.Errorf("DialTLS negotiated %s %s, want %v", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), s)
	}

	lines := osslRevLines()
	var want strings.Builder
	for _, l := range lines {
		want.WriteString(reversed(l))
	}
	for _, l := range lines[:5] {
		c.Write([]byte(l))
	}
	c.Write([]byte(strings.Join(lines[5:], "")))
	if !got.await(func(s string) bool { return len(s) >= want.Len() }, p.exited) {
		t.Fatalf("s_server answered %d bytes, want %d\n%s", len(got.String()), want.Len(), p)
	}
	if got.String() != want.String() {
		t.Errorf("s_server's answers differ from the lines reversed")
	}
	c.Write([]byte("CLOSE\n"))
	if ev := etClosed(t, h); ev.err != io.EOF {
		t.Errorf("OnClose after s_server closed: %v, want io.EOF", ev.err)
	}
	if err := p.wait(t); err != nil {
		t.Errorf("s_server: %v\n%s", err, p)
	}
}

// TestTLSDialOpenSSLServerKeyUpdate: an interactive s_server's command K
// updates its sending keys and asks the client to update its own, k
// updates only s_server's. Lines go both ways before and after each; the
// engine's Close ends with a close_notify, after which s_server exits
// cleanly. s_server's trace must show the client's one answer, to K.
func TestTLSDialOpenSSLServerKeyUpdate(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		p, addr := sServer(t, f, false, "-tls1_3", "-msg")
		got := newTextLog()
		h := etLogHandler(got)
		e := etStart(t, h, engine.Options{})
		c, err := e.DialTLS("tcp", addr, tlstest.Get().ClientConfig())
		if err != nil {
			t.Fatalf("DialTLS: %v\n%s", err, p)
		}
		both := func(round string) {
			t.Helper()
			c.Write([]byte("from gale, " + round + "\n"))
			p.expect(t, p.out, "from gale, "+round+"\n")
			p.send(t, "from openssl, "+round+"\n")
			if !got.await(func(s string) bool { return strings.Contains(s, "from openssl, "+round+"\n") }, nil) {
				t.Fatalf("the client did not receive s_server's line %q; received %q\n%s", round, got, p)
			}
		}
		both("before any update")
		// The trace, unlike s_server's other output, is flushed at once.
		sent := regexp.MustCompile(`(?m)^>>> TLS 1\.3, Handshake \[length 0005\], KeyUpdate`)
		received := regexp.MustCompile(`(?m)^<<< TLS 1\.3, Handshake \[length 0005\], KeyUpdate`)
		for i, cmd := range []string{"K", "k"} {
			p.send(t, cmd+"\n")
			p.expectCount(t, p.out, sent, i+1)
			if cmd == "K" { // the client's answer, before it writes with its new keys
				p.expectCount(t, p.out, received, 1)
			}
			both("after " + cmd)
		}
		c.Close()
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose after Close: %v, want nil", ev.err)
		}
		if err := p.wait(t); err != nil {
			t.Errorf("s_server: %v\n%s", err, p)
		}
		updates := osslKeyUpdates(p.out.String())
		if want := []string{">>> 1", "<<< 0", ">>> 0"}; !slices.Equal(updates, want) {
			t.Errorf("KeyUpdates in s_server's trace: %q, want %q (the client answers K, not k)", updates, want)
		}
	})
}

// TestTLSDialOpenSSLServerRefused: s_server, TLS 1.3 only, refuses a
// DialTLS restricted to TLS 1.2: DialTLS fails with s_server's alert.
func TestTLSDialOpenSSLServerRefused(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		p, addr := sServer(t, f, false, "-tls1_3")
		e := etStart(t, etNewHandler(), engine.Options{})
		cfg := tlstest.Get().ClientConfig()
		cfg.MaxVersion = tls.VersionTLS12
		_, err := e.DialTLS("tcp", addr, cfg)
		if err == nil || !strings.Contains(err.Error(), "protocol version") {
			t.Errorf("DialTLS: %v, want s_server's protocol_version alert", err)
		}
		p.wait(t) // -naccept 1: it ends with the connection
	})
}
