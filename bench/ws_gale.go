package main

import (
	"net"
	"net/http"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

var wsGale = wsServer{name: "gale", version: "github.com/galeio/gale (this tree)", serve: serveWsGale,
	note: "httpd.Server{Handler: mux} at its defaults (loops: GOMAXPROCS, epoll), websocket.Upgrader at /ws with default Options (no compression); the upgraded connection stays on its loop, OnMessage writes back c.WriteMessage(typ, data)"}

// wsGaleEcho echoes every message from the loop.
type wsGaleEcho struct{ websocket.BaseHandler }

func (wsGaleEcho) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.WriteMessage(typ, data)
}

// serveWsGale is gale's echo server: httpd with the Upgrader at /ws.
func serveWsGale(ln net.Listener) error {
	up := &websocket.Upgrader{Options: websocket.Options{Handler: wsGaleEcho{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		up.Upgrade(w, r, nil)
	})
	srv := &httpd.Server{Handler: mux}
	return srv.Serve(ln)
}
