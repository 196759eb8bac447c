// Package wsnbio is nbio's WebSocket echo server for the bench: its
// websocket example, every setting at its default.
package wsnbio

import (
	"net"
	"net/http"
	"os"

	"github.com/galeio/gale/bench/internal/wsserve"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

// Serve serves ln; it returns only if the engine fails to start. nbhttp
// opens its listener with Config.Listen, which hands it ln. Its log goes
// to stderr, warnings only, as for the bench's other nbio servers. Its
// upgraded connections' read deadline is wsserve.IdleDeadline when set.
func Serve(ln net.Listener) error {
	logging.Output = os.Stderr
	logging.SetLevel(logging.LevelWarn)
	u := websocket.NewUpgrader()
	if d := wsserve.IdleDeadline; d > 0 {
		u.KeepaliveTime = d // its default, 120 s, closes idle connections
	}
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
