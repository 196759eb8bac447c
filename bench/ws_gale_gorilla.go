package main

import (
	"net"
	"net/http"

	"github.com/galeio/gale/httpd"
	websocket "github.com/galeio/gale/websocket/gorilla"
)

var wsGaleGorilla = wsServer{name: "gale-gorilla", version: "github.com/galeio/gale/websocket/gorilla (this tree)", serve: serveWsGaleGorilla, extra: true,
	note: "gorilla's server (ws_gorilla.go) with only its import changed to gale's websocket/gorilla: a net/http server, the handler loops ReadMessage / WriteMessage on the request's goroutine; the hijacked connection is adopted onto gale's shared engine (loops: GOMAXPROCS), which reads it"}

// serveWsGaleGorilla is serveWsGorilla, ported by its import line.
func serveWsGaleGorilla(ln net.Listener) error {
	srv := &http.Server{Handler: galeGorillaMux()}
	return srv.Serve(ln)
}

// galeGorillaMux is gorilla's echo handler (ws_gorilla.go's) on /ws,
// written against websocket/gorilla.
func galeGorillaMux() *http.ServeMux {
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
	return mux
}

var wsGaleGorillaHTTPD = wsServer{name: "gale-gorilla-httpd", version: "github.com/galeio/gale/websocket/gorilla (this tree)", serve: serveWsGaleGorillaHTTPD, extra: true,
	note: "gale-gorilla's handler on gale's httpd.Server at its defaults in place of net/http's: the upgraded connection stays on the loop that served its request, and the handler's goroutine loops ReadMessage / WriteMessage"}

// serveWsGaleGorillaHTTPD is serveWsGaleGorilla on httpd.Server.
func serveWsGaleGorillaHTTPD(ln net.Listener) error {
	srv := &httpd.Server{Handler: galeGorillaMux()}
	return srv.Serve(ln)
}
