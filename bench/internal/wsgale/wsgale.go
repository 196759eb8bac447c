// Package wsgale is gale's WebSocket echo server for the bench: httpd
// with websocket's Upgrader at /ws, every setting at its default.
package wsgale

import (
	"net"
	"net/http"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

// echo writes every message back from the loop.
type echo struct{ websocket.BaseHandler }

func (echo) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.WriteMessage(typ, data)
}

// Serve serves ln until it fails: httpd.Server at its defaults with the
// Upgrader at /ws (default Options: no compression).
func Serve(ln net.Listener) error {
	up := &websocket.Upgrader{Options: websocket.Options{Handler: echo{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		up.Upgrade(w, r, nil)
	})
	srv := &httpd.Server{Handler: mux}
	return srv.Serve(ln)
}
