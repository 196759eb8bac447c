// Websocket-chat is a chat room in the browser, on gale: httpd.Server
// serves the page and, at /ws, the WebSocket connections (package
// websocket), compressed with permessage-deflate when the browser agrees
// (they all do). Try it with
//
//	go run ./examples/websocket-chat -addr 127.0.0.1:8080
//
// and open http://127.0.0.1:8080/ in a few browser tabs.
//
// Every connection stays on the event loop that accepted it: the
// messages are read, decompressed and handed to the room there, with no
// goroutine per connection. The room (room.go) sends each message to
// every member with websocket.Broadcast, which encodes and compresses it
// once for all of them. Its limits are checked on the server, whatever
// the page does: a client that sends something else than the chat's
// JSON is closed with 1008 (policy violation) and the reason.
//
// On SIGINT or SIGTERM the server shuts down gracefully: every browser is
// sent a close frame with 1001 (going away) "server restarting", and
// httpd.Server.Shutdown waits, within -shutdown, for the closing
// handshakes to end. The page then reconnects, with a backoff, until a
// server is back on the address, and joins again under its nickname.
package main

import (
	"context"
	"embed"
	"flag"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

// static holds the page: one file, with its script.
//
//go:embed static
var static embed.FS

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	grace := flag.Duration("shutdown", 10*time.Second, "time the browsers get to close on shutdown")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	srv := newServer(newRoom(log.Default()))
	log.Printf("listening on http://%s/", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		log.Fatal(err)
	case <-ctx.Done():
	}
	stop() // a second signal kills

	log.Print("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), *grace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Printf("shutdown: %v; closing the connections left", err)
		srv.Close()
		os.Exit(1)
	}
	if err := <-served; err != httpd.ErrServerClosed {
		log.Print(err)
	}
	log.Print("bye")
}

// newServer returns the HTTP server of room r: the page at /, the
// WebSocket at /ws. Its Shutdown closes every WebSocket with 1001.
func newServer(r *room) *httpd.Server {
	up := &websocket.Upgrader{
		Options: websocket.Options{
			Handler:     r,
			ReadLimit:   readLimit,
			Compression: websocket.CompressionEnabled,
			// A browser that stops reading (a stalled tab, a dead
			// network) is cut once this much waits for it, so that it
			// holds no more memory than that.
			MaxQueued: 256 << 10,
		},
		// CheckOrigin is left nil: only the page's own origin (and
		// clients that send none) may connect.
	}
	page, err := fs.Sub(static, "static")
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(page))
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, req *http.Request) {
		// A refusal has been answered (400, 403, 426): log it only.
		if _, err := up.Upgrade(w, req, nil); err != nil {
			r.log.Printf("%s: %v", req.RemoteAddr, err)
		}
	})
	srv := &httpd.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       time.Minute,
	}
	// Shutdown waits for the upgraded connections too: this tells them
	// to go.
	srv.RegisterOnShutdown(func() { r.closeAll(websocket.StatusGoingAway, reasonRestart) })
	return srv
}
