package websocket

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"time"
)

// Dialer opens client WebSocket connections (RFC 6455 §4.1), served on
// Options.Engine's loops like the server's: ws:// and wss:// (TLS on the
// loop too), with the whole handshake done there.
//
// A Dialer may be used by many goroutines at once; its fields must not
// change after the first Dial.
type Dialer struct {
	Options
	// TLSConfig configures wss:// connections; nil uses the zero
	// configuration (ServerName is set from the URL when empty).
	TLSConfig *tls.Config
	// Subprotocols are offered in the handshake, by preference.
	Subprotocols []string
	// Header is added to the handshake request (Origin, Cookie,
	// Authorization...).
	Header http.Header
	// HandshakeTimeout bounds the dial and the handshake when ctx has no
	// earlier deadline. Default 10 s.
	HandshakeTimeout time.Duration
}

// Dial opens a WebSocket connection to url (ws:// or wss://), served by
// d.Handler, whose OnOpen runs before Dial returns. The server's response
// is returned too, with its header (its body is empty), also when the
// handshake fails: a non-101 status returns an error wrapping
// ErrBadHandshake.
func (d *Dialer) Dial(ctx context.Context, url string) (*Conn, *http.Response, error) {
	return nil, nil, errors.ErrUnsupported
}

// Dial dials url with a Dialer whose Handler is h and whose other fields
// are their defaults.
func Dial(ctx context.Context, url string, h Handler) (*Conn, *http.Response, error) {
	d := Dialer{Options: Options{Handler: h}}
	return d.Dial(ctx, url)
}
