package websocket_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/galeio/gale/websocket"
)

// TestEcho sends messages of many sizes each way, over gale's HTTP
// server in plain TCP and TLS, and checks that they come back whole.
func TestEcho(t *testing.T) {
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "ws", true: "wss"}[secure]
		t.Run(name, func(t *testing.T) {
			srv := newRecorder(true)
			url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, secure)
			cli := newRecorder(false)
			c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
			cli.expect(t, "open")
			srv.expect(t, "open")
			for _, n := range []int{0, 1, 125, 126, 127, 65535, 65536, 70000, 1 << 20} {
				msg := strings.Repeat("x", n)
				if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
					t.Fatal(err)
				}
				srv.expect(t, "msg", msg)
				cli.expect(t, "msg", msg)
			}
			bin := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
			c.WriteMessage(websocket.BinaryMessage, bin)
			srv.expect(t, "msg", string(bin))
			if ev := cli.expect(t, "msg", string(bin)); ev.typ != websocket.BinaryMessage {
				t.Errorf("echo type = %v, want binary", ev.typ)
			}
			if err := c.Close(websocket.StatusNormalClosure, "bye"); err != nil {
				t.Fatal(err)
			}
			ev := srv.expect(t, "close")
			if ce, ok := ev.err.(*websocket.CloseError); !ok || ce.Code != websocket.StatusNormalClosure || ce.Reason != "bye" {
				t.Errorf("server OnClose(%v), want the close frame 1000 bye", ev.err)
			}
			ev = cli.expect(t, "close")
			if websocket.CloseStatus(ev.err) != websocket.StatusNormalClosure {
				t.Errorf("client OnClose(%v), want the answer 1000", ev.err)
			}
		})
	}
}

// TestEchoNetHTTP upgrades under a stock net/http server: a plain
// connection is adopted onto the loops, a TLS one relayed to them.
func TestEchoNetHTTP(t *testing.T) {
	for _, secure := range []bool{false, true} {
		name := map[bool]string{false: "ws", true: "wss"}[secure]
		t.Run(name, func(t *testing.T) {
			e := testEngine(t)
			srv := newRecorder(true)
			u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, Engine: e}}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) })
			var hs *httptest.Server
			d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: e}}
			url := ""
			if secure {
				hs = httptest.NewTLSServer(h)
				pool := x509.NewCertPool()
				pool.AddCert(hs.Certificate())
				d.TLSConfig = &tls.Config{RootCAs: pool}
				url = "wss://" + hs.Listener.Addr().String()
			} else {
				hs = httptest.NewServer(h)
				url = "ws://" + hs.Listener.Addr().String()
			}
			defer hs.Close()
			cli := d.Handler.(*recorder)
			c := dial(t, d, url)
			cli.expect(t, "open")
			srv.expect(t, "open")
			for _, n := range []int{5, 70000} {
				msg := strings.Repeat("y", n)
				c.WriteMessage(websocket.TextMessage, []byte(msg))
				srv.expect(t, "msg", msg)
				cli.expect(t, "msg", msg)
			}
			c.Close(websocket.StatusGoingAway, "")
			srv.expect(t, "close")
			if ev := cli.expect(t, "close"); websocket.CloseStatus(ev.err) != websocket.StatusGoingAway {
				t.Errorf("client OnClose(%v), want the answer 1001", ev.err)
			}
		})
	}
}
