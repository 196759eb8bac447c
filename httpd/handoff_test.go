package httpd_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestHandOff checks Server.HandOff and ServeConn: Shutdown hands an idle
// keep-alive connection to another server instead of closing it, and
// the client's next request on the same connection is answered there,
// without a new dial; a connection with a request in flight is drained
// as before, and closed.
func TestHandOff(t *testing.T) { backendtest.Run(t, testHandOff) }

func testHandOff(t *testing.T) {
	named := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })
	}
	b := &httpd.Server{}
	bAddr := start(t, b, named("B")) // B serves its own listener too
	var handed atomic.Int64
	a := &httpd.Server{HandOff: func(nc net.Conn, input []byte) error {
		handed.Add(1)
		return b.ServeConn(nc, input)
	}}
	aAddr, done := listen(t, a, named("A"), (*httpd.Server).Serve)

	var dials atomic.Int64
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	get := func() (body string, reused bool) {
		t.Helper()
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused },
		})
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+aAddr+"/", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		return string(b), reused
	}
	if body, _ := get(); body != "A" {
		t.Fatalf("first answer %q, want A", body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-done; err != http.ErrServerClosed {
		t.Errorf("Serve: %v", err)
	}
	if n := handed.Load(); n != 1 {
		t.Fatalf("%d connections handed off, want 1", n)
	}
	body, reused := get()
	if body != "B" || !reused || dials.Load() != 1 {
		t.Errorf("after the hand-off: answer %q, reused %v, %d dials; want B on the same connection, 1 dial", body, reused, dials.Load())
	}
	_ = bAddr
}
