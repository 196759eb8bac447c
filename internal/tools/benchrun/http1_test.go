package benchrun

import (
	"net"
	"net/http"

	"github.com/galeio/gale/httpd"
)

// serveHTTP1 is gale's HTTP/1.1 server for GaleHTTPServers in the tests
// (which, unlike benchrun, may import httpd): the same few lines as the
// programs' (cmd/galebench and bench, http1.go).
func serveHTTP1(ln net.Listener, h http.Handler, mixed bool) error {
	srv := &httpd.Server{Handler: h}
	if mixed {
		srv.Mode = httpd.ModeMixed
	}
	return srv.Serve(ln)
}
