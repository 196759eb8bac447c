package benchrun

import (
	"net"
	"net/http"
)

// H2Servers is net/http's HTTP/2 server in the clear, the reference
// every HTTP/2 ratio is taken against; gale's is GaleH2Servers'. Both
// serve HTTPHandler.
func H2Servers() []Server {
	return []Server{
		{Name: "std-h2", ServeH2: serveStdH2,
			Note: "net/http's Server with Protocols HTTP1 and UnencryptedHTTP2 (its bundled HTTP/2 server: a goroutine per connection, another reading its frames, one per stream's handler), HTTP2 settings at their defaults, serving HTTPHandler on the listener"},
	}
}

// H2Protocols are the protocols of every HTTP/2 server of the suite:
// HTTP/1, and HTTP/2 in the clear for a client that opens with the
// preface.
func H2Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}

// serveStdH2 is net/http's server with H2Protocols, every other setting
// at its default.
func serveStdH2(ln net.Listener, ready func(net.Addr)) error {
	srv := &http.Server{Handler: HTTPHandler(), Protocols: H2Protocols()}
	ready(ln.Addr())
	return srv.Serve(ln)
}

// GaleH2Servers returns gale's HTTP/2 server, gale-h2, serving
// HTTPHandler with serve, which the programs give: serve(ln, h) serves h
// on ln with httpd.Server{Handler: h, Protocols: H2Protocols()}, every
// other setting at its default, until it fails. benchrun cannot import
// httpd (see GaleHTTPServers).
func GaleH2Servers(serve func(ln net.Listener, h http.Handler) error) []Server {
	return []Server{
		{Name: "gale-h2", Gale: true,
			ServeH2: func(ln net.Listener, ready func(net.Addr)) error {
				ready(ln.Addr())
				return serve(ln, HTTPHandler())
			},
			Note: "gale httpd.Server{Handler: HTTPHandler, Protocols: HTTP1 and UnencryptedHTTP2} at its defaults, Serve on the listener: ModeLoop, each connection's frames read on the engine's loops, each stream's handler on a goroutine from a pool, which writes its response's frames itself; the engine's default Options, Backend Auto (epoll on Linux for httpd)"},
	}
}
