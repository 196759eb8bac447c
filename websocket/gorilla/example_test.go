package gorilla_test

import (
	"fmt"
	"log"
	"net"
	"net/http"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	gale "github.com/galeio/gale/websocket"
	websocket "github.com/galeio/gale/websocket/gorilla" // was "github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{} // use default options

// echoHandler is gorilla's examples/echo server, ported by the import
// line alone: a goroutine per connection, blocked in ReadMessage.
func echoHandler(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		log.Print("upgrade:", err)
		return
	}
	defer c.Close()
	for {
		mt, message, err := c.ReadMessage()
		if err != nil {
			break
		}
		if err := c.WriteMessage(mt, message); err != nil {
			break
		}
	}
}

// startEcho serves echoHandler on gale's HTTP server (net/http's
// http.ListenAndServe serves it as well) and returns its URL and a dialer
// whose connections run on an engine of their own, which stop ends.
func startEcho() (url string, d *websocket.Dialer, stop func()) {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", echoHandler)
	srv := &httpd.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(ln)
	e, err := gale.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		log.Fatal(err)
	}
	// Engine is gale's addition; without it the program's shared engine
	// runs the connections.
	d = &websocket.Dialer{HandshakeTimeout: 5 * time.Second, Engine: e}
	return "ws://" + ln.Addr().String() + "/echo", d, func() { srv.Close(); e.Stop() }
}

// The echo server of gorilla's examples/echo, and a client, each a
// goroutine blocked in ReadMessage.
func Example() {
	url, dialer, stop := startEcho()
	defer stop()

	c, _, err := dialer.Dial(url, nil)
	if err != nil {
		log.Fatal("dial:", err)
	}
	defer c.Close()
	for _, msg := range []string{"hello", "loops"} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			log.Fatal("write:", err)
		}
		_, message, err := c.ReadMessage()
		if err != nil {
			log.Fatal("read:", err)
		}
		fmt.Printf("recv: %s\n", message)
	}
	// A clean close: send a close frame, and read until the server's
	// answer comes back.
	c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _, err = c.ReadMessage()
	fmt.Println(websocket.IsCloseError(err, websocket.CloseNormalClosure))
	// Output:
	// recv: hello
	// recv: loops
	// true
}

// JSON both ways, through the same echo server.
func ExampleConn_WriteJSON() {
	url, dialer, stop := startEcho()
	defer stop()
	c, _, err := dialer.Dial(url, nil)
	if err != nil {
		log.Fatal("dial:", err)
	}
	defer c.Close()

	type point struct{ X, Y int }
	c.WriteJSON(point{3, 4})
	var p point
	if err := c.ReadJSON(&p); err != nil {
		log.Fatal("read:", err)
	}
	fmt.Println(p.X, p.Y)
	// Output: 3 4
}

// gorilla's keepalive, unchanged: the writer pings, the reader's pong
// handler pushes the read deadline on, and a peer that stops answering
// fails ReadMessage with a timeout. (Package websocket's
// Options.PingInterval does this on the loop with no goroutine.)
func ExampleConn_SetPongHandler() {
	const pongWait, pingPeriod = 60 * time.Second, 54 * time.Second
	serve := func(c *websocket.Conn) {
		defer c.Close()
		go func() {
			for range time.Tick(pingPeriod) {
				if c.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)) != nil {
					return
				}
			}
		}()
		c.SetReadDeadline(time.Now().Add(pongWait))
		c.SetPongHandler(func(string) error { return c.SetReadDeadline(time.Now().Add(pongWait)) })
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				if websocket.IsUnexpectedCloseError(err, websocket.CloseGoingAway, websocket.CloseNormalClosure) {
					log.Printf("error: %v", err)
				}
				return
			}
			log.Printf("%s", msg)
		}
	}
	http.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		if c, err := upgrader.Upgrade(w, r, nil); err == nil {
			serve(c)
		}
	})
}
