package benchrun

import (
	"net"
	"net/http"
)

// HTTPServers are gale's HTTP/1.1 servers and net/http's, the reference
// every HTTP ratio is taken against. All serve HTTPHandler.
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
