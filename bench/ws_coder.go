package main

import (
	"context"
	"io"
	"net"
	"net/http"

	"github.com/coder/websocket"
)

var wsCoder = wsServer{name: "coder", version: "github.com/coder/websocket v1.8.15", serve: serveWsCoder,
	note: "its echo example: a net/http server, websocket.Accept(w, r, nil) (compression off by default), then per message c.Reader, c.Writer of the same type and io.Copy, on the request's goroutine; no per-message timeout (the example's 10 s one would close idle connections)"}

// serveWsCoder is coder/websocket's echo example: Accept, then copy each
// message's reader into a writer of the same type.
func serveWsCoder(ln net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := context.Background()
		for {
			typ, rd, err := c.Reader(ctx)
			if err != nil {
				return
			}
			wr, err := c.Writer(ctx, typ)
			if err != nil {
				return
			}
			if _, err := io.Copy(wr, rd); err != nil {
				return
			}
			if err := wr.Close(); err != nil {
				return
			}
		}
	})
	srv := &http.Server{Handler: mux}
	return srv.Serve(ln)
}
