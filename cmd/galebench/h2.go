package main

import (
	"net"
	"net/http"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/tools/benchrun"
)

// serveH2 is gale's HTTP/2 server for benchrun.GaleH2Servers, which
// cannot import httpd: httpd.Server{Handler: h} serving HTTP/1 and h2c,
// at its defaults otherwise.
func serveH2(ln net.Listener, h http.Handler) error {
	srv := &httpd.Server{Handler: h, Protocols: benchrun.H2Protocols()}
	return srv.Serve(ln)
}
