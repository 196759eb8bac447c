package benchrun

import (
	"net"
	"net/http"
)

// HTTPServers is net/http's HTTP/1.1 server, the reference every HTTP
// ratio is taken against; gale's are GaleHTTPServers. All serve
// HTTPHandler.
func HTTPServers() []Server {
	return []Server{
		{Name: "std-http", ServeHTTP: serveStdHTTP,
			Note: "net/http's Server with default settings (a goroutine per connection) serving HTTPHandler on the listener"},
	}
}

// serveStdHTTP is net/http's server, every setting at its default.
func serveStdHTTP(ln net.Listener, ready func(net.Addr)) error {
	srv := &http.Server{Handler: HTTPHandler()}
	ready(ln.Addr())
	return srv.Serve(ln)
}

// GaleHTTPServers returns gale's HTTP/1.1 servers, gale-http and
// gale-http-mixed, serving HTTPHandler with serve, which the programs
// give: serve(ln, h, mixed) serves h on ln with httpd.Server{Handler: h}
// at its defaults, with Mode httpd.ModeMixed if mixed, until it fails.
// benchrun cannot import package httpd itself: httpd depends on
// golang.org/x/net, which the dependency policy (internal/depstest)
// keeps out of every core package but the protocol layers, this one
// included.
func GaleHTTPServers(serve func(ln net.Listener, h http.Handler, mixed bool) error) []Server {
	with := func(mixed bool) func(net.Listener, func(net.Addr)) error {
		return func(ln net.Listener, ready func(net.Addr)) error {
			ready(ln.Addr())
			return serve(ln, HTTPHandler(), mixed)
		}
	}
	return []Server{
		{Name: "gale-http", ServeHTTP: with(false), Gale: true,
			Note: "gale httpd.Server{Handler: HTTPHandler} at its defaults, Serve on the listener: ModeLoop (every connection on the engine's loops, a goroutine from a pool per request being handled), the engine's default Options, with Backend Auto, which httpd takes for epoll on Linux (GALE_BACKEND, inherited by the server children, overrides it)"},
		{Name: "gale-http-mixed", ServeHTTP: with(true), Gale: true,
			Note: "gale-http with Mode httpd.ModeMixed: net/http's own server (a goroutine per connection) while fewer than MixedThreshold (default 1,000) connections are open, the loops beyond"},
	}
}
