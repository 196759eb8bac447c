package main

import (
	"net"
	"net/http"

	"github.com/gorilla/websocket"
)

var wsGorilla = wsServer{name: "gorilla", version: "github.com/gorilla/websocket v1.5.3", serve: serveWsGorilla,
	note: "its examples/echo: a net/http server, websocket.Upgrader{} at its defaults (4 KiB buffers, reusing net/http's; no compression), the handler loops ReadMessage / WriteMessage on the request's goroutine"}

// serveWsGorilla is gorilla's echo example: the handler upgrades, then
// reads each message and writes it back, until the connection fails.
func serveWsGorilla(ln net.Listener) error {
	upgrader := websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, message, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(mt, message); err != nil {
				return
			}
		}
	})
	srv := &http.Server{Handler: mux}
	return srv.Serve(ln)
}
