package main

import (
	"net"
	"net/http"

	"github.com/galeio/gale/httpd"
)

// serveHTTP1 is gale's HTTP/1.1 server for benchrun.GaleHTTPServers,
// which cannot import httpd (see there): httpd.Server{Handler: h} at its
// defaults, in ModeMixed if mixed.
func serveHTTP1(ln net.Listener, h http.Handler, mixed bool) error {
	srv := &httpd.Server{Handler: h}
	if mixed {
		srv.Mode = httpd.ModeMixed
	}
	return srv.Serve(ln)
}
