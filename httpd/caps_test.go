package httpd_test

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestMaxConnsPerIP drives a client that opens connections and sends
// nothing (slowloris) from one address past Engine.MaxConnsPerIP: the
// ones past it are refused and counted, while a client from another
// address is served.
func TestMaxConnsPerIP(t *testing.T) { backendtest.Run(t, testMaxConnsPerIP) }

func testMaxConnsPerIP(t *testing.T) {
	const max = 20
	srv := &httpd.Server{Engine: engine.Options{MaxConnsPerIP: max}}
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	var refused int
	for range max + 30 {
		nc, err := d.Dial("tcp", addr)
		if err != nil {
			refused++
			continue
		}
		defer nc.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.Stats().Engine.Total().Refused.MaxConnsPerIP < 30 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := srv.Stats().Engine.Total().Refused.MaxConnsPerIP; n != 30 {
		t.Errorf("%d connections refused, want 30 (%d reset as they connected)", n, refused)
	}
	c := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}).DialContext}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a client from another address: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" {
		t.Errorf("a client from another address got %q", b)
	}
}
