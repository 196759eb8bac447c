package engine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// TestTLSRenegotiationRefused: a TLS 1.2 peer that tries to renegotiate,
// as a client (s_client's R sends a new ClientHello) or as a server
// (s_server's R sends a HelloRequest), is refused with crypto/tls's
// error on that connection alone; an established connection keeps
// echoing.
func TestTLSRenegotiationRefused(t *testing.T) {
	needTool(t, "openssl")
	f := osslFiles(t)
	backendtest.Run(t, func(t *testing.T) {
		t.Run("client renegotiates", func(t *testing.T) {
			h, a, good := hostileServer(t, engine.Options{})
			p := sClient(t, a, f, "-tls1_2")
			etOpened(t, h)
			p.send(t, "before\n")
			p.expect(t, p.out, "before\n")
			p.send(t, "R\n")
			var err error
			select {
			case ev := <-h.closed:
				err = ev.err
			case <-time.After(etWait):
				t.Fatalf("no OnClose after a renegotiation attempt\n%s", p)
			}
			if err == nil || !strings.Contains(err.Error(), "unexpected handshake message") {
				t.Fatalf("OnClose after a renegotiation attempt: %v\n%s", err, p)
			}
			t.Logf("server's OnClose after a renegotiation attempt: %v", err)
			etEchoCheck(t, good, []byte("after"))
		})
		t.Run("server renegotiates", func(t *testing.T) {
			p, addr := sServer(t, f, false, "-tls1_2")
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{})
			c, err := e.DialTLS("tcp", addr, tlstest.Get().ClientConfig())
			if err != nil {
				t.Fatalf("DialTLS: %v\n%s", err, p)
			}
			etOpened(t, h)
			c.Write([]byte("hello\n"))
			p.expect(t, p.out, "hello\n")
			p.send(t, "R\n")
			ev := etClosed(t, h)
			if ev.err == nil || !strings.Contains(ev.err.Error(), "renegotiation") {
				t.Errorf("OnClose after the server's HelloRequest: %v, want crypto/tls's no-renegotiation error", ev.err)
			}
		})
	})
}
