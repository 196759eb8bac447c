package websocket_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

// serveEcho starts an echo server with o on gale's HTTP server, as
// ExampleUpgrader does, and returns its URL and a function that stops it.
func serveEcho(o websocket.Options) (url string, stop func()) {
	o.Handler = echoHandler{}
	return serveOptions(o)
}

// serveOptions starts a server with o, as ExampleUpgrader does.
func serveOptions(o websocket.Options) (url string, stop func()) {
	u := &websocket.Upgrader{Options: o}
	srv := &httpd.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.Upgrade(w, r, nil)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	return "ws://" + ln.Addr().String(), func() { srv.Close() }
}

// say dials url with o (its Handler and Engine are set here), sends msg
// and prints the answer.
func say(url string, o websocket.Options, msg string) {
	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Stop()
	p := printer{got: make(chan struct{})}
	o.Handler, o.Engine = p, e
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := (&websocket.Dialer{Options: o}).Dial(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(websocket.StatusNormalClosure, "")
	c.WriteMessage(websocket.TextMessage, []byte(msg))
	select {
	case <-p.got:
	case <-ctx.Done():
		fmt.Println("no answer")
	}
}

// A server on gale's HTTP server: the upgraded connection stays on the
// loop that served its request (TLS included), and costs no goroutine.
func ExampleUpgrader() {
	u := &websocket.Upgrader{Options: websocket.Options{Handler: echoHandler{}}}
	srv := &httpd.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.Upgrade(w, r, nil) // on error, Upgrade has answered the request
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close() // ends the upgraded connections too

	say("ws://"+ln.Addr().String(), websocket.Options{}, "hello")
	// Output: text: hello
}

// A server under net/http: Upgrade hijacks the connection and adopts it
// onto Options.Engine's loops, so it costs no goroutine either from then
// on. net/http's Shutdown and Close do not see hijacked connections:
// stop the engine to end them.
func ExampleUpgrader_netHTTP() {
	e, err := websocket.NewEngine(engine.Options{})
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	u := &websocket.Upgrader{Options: websocket.Options{Handler: echoHandler{}, Engine: e}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		u.Upgrade(w, r, nil)
	})
	srv := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Close()

	say("ws://"+ln.Addr().String()+"/ws", websocket.Options{}, "hello, net/http")
	// Output: text: hello, net/http
}
