package main

import (
	"net"
	"net/http"

	"github.com/galeio/gale/http1"
)

// serveHTTP1 is gale's HTTP/1.1 server for benchrun.GaleHTTPServers,
// which cannot import http1 (see there): http1.Server{Handler: h} at its
// defaults, in ModeMixed if mixed.
func serveHTTP1(ln net.Listener, h http.Handler, mixed bool) error {
	srv := &http1.Server{Handler: h}
	if mixed {
		srv.Mode = http1.ModeMixed
	}
	return srv.Serve(ln)
}
