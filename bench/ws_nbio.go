package main

import (
	"net"
	"net/http"
	"os"

	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

var wsNbio = wsServer{name: "nbio", version: "github.com/lesismal/nbio v1.6.12", serve: serveWsNbio,
	note: "its websocket server example: nbhttp.NewEngine(nbhttp.Config{Network: \"tcp\", Addrs, Handler: mux}) at its defaults (IOModNonBlocking: every connection on the pollers, NumCPU/4 of them, at least 1; 120 s keep-alive read deadline), websocket.NewUpgrader() with OnMessage writing back c.WriteMessage(messageType, data); no compression"}

// serveWsNbio is nbio's websocket example. nbhttp opens its listener with
// Config.Listen, which hands it ln. Its log goes to stderr, warnings
// only, as for the other nbio servers.
func serveWsNbio(ln net.Listener) error {
	logging.Output = os.Stderr
	logging.SetLevel(logging.LevelWarn)
	u := websocket.NewUpgrader()
	u.OnMessage(func(c *websocket.Conn, messageType websocket.MessageType, data []byte) {
		c.WriteMessage(messageType, data)
	})
	mux := &http.ServeMux{}
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if _, err := u.Upgrade(w, r, nil); err != nil {
			return
		}
	})
	engine := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{ln.Addr().String()},
		Handler: mux,
		Listen:  func(string, string) (net.Listener, error) { return ln, nil },
	})
	if err := engine.Start(); err != nil {
		return err
	}
	select {}
}
