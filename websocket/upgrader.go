package websocket

import (
	"errors"
	"net/http"
)

// Upgrader upgrades HTTP requests to WebSocket connections (RFC 6455 §4.2),
// on gale's HTTP server (http1.Server) or on net/http's.
//
// On http1.Server the connection stays on its loop: frames are read and
// written there, and no goroutine is left behind. On a net/http server,
// Upgrade hijacks the connection and adopts it onto Options.Engine's
// loops, so that it too costs no goroutine from then on; a TLS connection
// that net/http terminated cannot leave its goroutine (its record state
// lives in crypto/tls's tls.Conn), and is served by one reading goroutine
// feeding the same loop-side parser.
//
// An Upgrader may be used by many goroutines at once; its fields must not
// change after the first Upgrade.
type Upgrader struct {
	Options
	// Subprotocols are the subprotocols the server speaks, by preference:
	// the first that the client offers is agreed on. None by default.
	Subprotocols []string
	// CheckOrigin decides whether a request's Origin is allowed. nil
	// allows requests with no Origin header and those whose Origin's host
	// is the request's Host (a browser on another site cannot connect).
	CheckOrigin func(r *http.Request) bool
}

// Upgrade answers r with 101 Switching Protocols and makes its connection
// a WebSocket served by u.Handler, whose OnOpen runs before any other
// callback (maybe before Upgrade returns). header is added to the
// response (Set-Cookie, say); it may be nil.
//
// A request that is not a valid upgrade is answered with an HTTP error
// (400, 403 for a refused origin, 426 for a wrong version) and Upgrade
// returns an error that wraps ErrBadHandshake. The handler must not write
// to w after Upgrade, whatever it returns.
func (u *Upgrader) Upgrade(w http.ResponseWriter, r *http.Request, header http.Header) (*Conn, error) {
	return nil, errors.ErrUnsupported
}
