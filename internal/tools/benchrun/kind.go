package benchrun

// kind is what a server speaks and what a case's clients expect: echo
// over TCP, echo over TLS, HTTP/1.1, or HTTP/2 in the clear (h2c). A server runs the cases of its
// kind alone, and each kind has its own reference server.
type kind int

const (
	kindPlain kind = iota // echo over TCP: stream, pingpong, conns, idle
	kindTLS               // echo over TLS: the tls- scenarios
	kindHTTP              // HTTP/1.1: the http- scenarios
	kindH2                // h2c by prior knowledge: the h2- scenarios
)

// String names the kind in messages: plain, TLS, HTTP, HTTP/2.
func (k kind) String() string {
	switch k {
	case kindTLS:
		return "TLS"
	case kindHTTP:
		return "HTTP"
	case kindH2:
		return "HTTP/2"
	}
	return "plain"
}

// kind returns the kind of server s.
func (s Server) kind() kind {
	switch {
	case s.ServeTLS != nil:
		return kindTLS
	case s.ServeHTTP != nil:
		return kindHTTP
	case s.ServeH2 != nil:
		return kindH2
	}
	return kindPlain
}

// kind returns the kind of case c, from its scenario's prefix.
func (c Case) kind() kind {
	switch {
	case c.TLS():
		return kindTLS
	case c.HTTP():
		return kindHTTP
	case c.H2():
		return kindH2
	}
	return kindPlain
}
