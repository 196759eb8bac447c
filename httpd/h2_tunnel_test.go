package httpd_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
	"golang.org/x/net/http2"
)

// TestH2Tunnel: with ExtendedConnect, the server announces
// SETTINGS_ENABLE_CONNECT_PROTOCOL, and a handler's Tunnel turns an
// extended CONNECT's stream into a byte stream that outlives the
// handler: here an echo until the client ends its half.
func TestH2Tunnel(t *testing.T) { backendtest.Run(t, testH2Tunnel) }

func testH2Tunnel(t *testing.T) {
	srv := h2cServer()
	srv.ExtendedConnect = true
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(":protocol") != "echo" {
			http.Error(w, "want :protocol echo", 400)
			return
		}
		rwc, err := httpd.Tunnel(w)
		if err != nil {
			t.Error(err)
			return
		}
		go func() { // after the handler's return
			io.Copy(rwc, rwc)
			rwc.Close()
		}()
	}))
	r := dialH2(t, addr)
	if !r.peerSettings[http2.SettingEnableConnectProtocol] {
		t.Fatal("SETTINGS_ENABLE_CONNECT_PROTOCOL not announced")
	}
	if err := r.request(1, "CONNECT", "/chat", false, ":protocol", "echo"); err != nil {
		t.Fatal(err)
	}
	if got := r.status(1); got != "200" {
		t.Fatalf("CONNECT: %s", got)
	}
	for _, msg := range []string{"first", "second"} {
		r.fr.WriteData(1, false, []byte(msg))
		if got := r.data(1); got != msg {
			t.Fatalf("echo %q, want %q", got, msg)
		}
	}
	r.fr.WriteData(1, true, nil)
	for {
		f := r.read()
		if d, ok := f.(*http2.DataFrame); ok && d.StreamID == 1 && d.StreamEnded() {
			return
		}
	}
}

// TestH2ProtocolRefused: without ExtendedConnect, :protocol is a
// malformed request.
func TestH2ProtocolRefused(t *testing.T) { backendtest.Run(t, testH2ProtocolRefused) }

func testH2ProtocolRefused(t *testing.T) {
	addr := start(t, h2cServer(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := dialH2(t, addr)
	r.request(1, "CONNECT", "/chat", false, ":protocol", "websocket")
	if got := r.status(1); got != "RST_STREAM PROTOCOL_ERROR" {
		t.Fatalf("%s, want PROTOCOL_ERROR", got)
	}
}
