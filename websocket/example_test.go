package websocket_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

// echoHandler sends every message back.
type echoHandler struct{ websocket.BaseHandler }

func (echoHandler) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.WriteMessage(typ, data) // copies data: it is valid only during the call
}

// printer prints what it is sent, and says when the answer came.
type printer struct {
	websocket.BaseHandler
	got chan struct{}
}

func (p printer) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	fmt.Printf("%s: %s\n", typ, data)
	close(p.got)
}

// An echo server on gale's HTTP server, with compression, and a client.
func Example() {
	u := &websocket.Upgrader{Options: websocket.Options{
		Handler:     echoHandler{},
		Compression: websocket.CompressionEnabled,
	}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		u.Upgrade(w, r, nil) // on error, Upgrade has answered the request
	})
	srv := &httpd.Server{Handler: mux}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Close()

	e, _ := websocket.NewEngine(engineOptions()) // the client's loops
	defer e.Stop()
	p := printer{got: make(chan struct{})}
	d := &websocket.Dialer{Options: websocket.Options{Handler: p, Engine: e}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := d.Dial(ctx, "ws://"+ln.Addr().String()+"/ws")
	if err != nil {
		fmt.Println(err)
		return
	}
	c.WriteMessage(websocket.TextMessage, []byte("hello, loops"))
	<-p.got
	c.Close(websocket.StatusNormalClosure, "done")
	// Output: text: hello, loops
}
