package httpd_test

import (
	"io"
	"testing"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestAutoBackend checks package backend's table for httpd: handlers run
// on pooled goroutines, so the engine's Auto opens epoll on Linux, as
// the server asks nothing of it but says it offloads.
func TestAutoBackend(t *testing.T) {
	want := backendtest.Auto(t, false)
	srv := &httpd.Server{}
	addr := start(t, srv, helloHandler())
	res, err := client(t).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if got := httpd.Engine(srv).Stats().Loops[0].Backend; got != want {
		t.Fatalf("Auto opened %v for httpd; package backend's table says %v", got, want)
	}
}
