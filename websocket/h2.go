package websocket

import (
	"net/http"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// WebSockets over HTTP/2 (RFC 8441). A browser whose HTTP/2 connection
// announced extended CONNECT (httpd.Server's ExtendedConnect) opens a
// WebSocket as one of its streams: a CONNECT with :protocol websocket,
// answered 200 (no Sec-WebSocket-Key, no Accept), after which the
// stream's DATA carries the WebSocket's frames, as a TCP connection's
// bytes would. The stream (httpd.Tunnel) is relayed to a loop of
// Options.Engine through a socket pair, as a TLS connection that
// net/http terminated is (relay.go): the Conn is then served as any
// other, at the cost of the relay's two goroutines and the pair's two
// descriptors.

// isH2WebSocket reports whether r is RFC 8441's extended CONNECT for a
// WebSocket.
func isH2WebSocket(r *http.Request) bool {
	return r.ProtoMajor == 2 && r.Method == http.MethodConnect && r.Header.Get(":protocol") == "websocket"
}

// tunnel answers an extended CONNECT (200, with w's header) and serves
// its stream as c's connection.
func (u *Upgrader) tunnel(c *Conn, w http.ResponseWriter) error {
	e, err := u.engineFor()
	if err != nil {
		return err
	}
	stream, err := httpd.Tunnel(w)
	if err != nil {
		return err
	}
	nc, err := relay(stream, nil)
	if err != nil {
		return err
	}
	ec, err := e.AdoptWith(nc, engine.Adoption{Context: (*protocol)(c)})
	if err != nil {
		nc.Close()
		return err
	}
	c.ecp.Store(ec)
	return nil
}
