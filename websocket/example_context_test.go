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

// session is a connection's value: who is connected.
type session struct{ name string }

// welcomer greets each connection by its session's name.
type welcomer struct{ websocket.BaseHandler }

func (welcomer) OnOpen(c *websocket.Conn) {
	s := c.Context().(*session) // the handler's, set before any callback
	c.WriteMessage(websocket.TextMessage, []byte("hello, "+s.name))
}

// A connection's value, set by the HTTP handler once Upgrade returned the
// connection, is there for its first callback: the callbacks wait for
// the handler's SetContext (or its return).
func ExampleConn_SetContext() {
	u := &websocket.Upgrader{Options: websocket.Options{Handler: welcomer{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := u.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade answered the request
		}
		c.SetContext(&session{name: r.URL.Query().Get("name")})
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
	c, _, err := d.Dial(ctx, "ws://"+ln.Addr().String()+"/ws?name=Ada")
	if err != nil {
		fmt.Println(err)
		return
	}
	select {
	case <-p.got:
	case <-ctx.Done():
		fmt.Println("no greeting")
	}
	c.Close(websocket.StatusNormalClosure, "done")
	// Output: text: hello, Ada
}
