package websocket_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/galeio/gale/websocket"
)

// pingPrinter prints the first ping its connection receives (the loop
// answers every ping with a pong by itself).
type pingPrinter struct {
	websocket.BaseHandler
	got chan struct{}
}

func (p pingPrinter) OnPing(c *websocket.Conn, data []byte) {
	select {
	case <-p.got:
	default:
		fmt.Println("pinged by the server")
		close(p.got)
	}
}

// keepaliveLogger logs the connections keepalive gave up.
type keepaliveLogger struct{ websocket.BaseHandler }

func (keepaliveLogger) OnClose(c *websocket.Conn, err error) {
	if errors.Is(err, websocket.ErrPongTimeout) {
		log.Printf("%v: no answer to the ping, connection cut (1006)", c.RemoteAddr())
	}
}

// With PingInterval set, a connection whose peer has been silent that
// long is pinged, on its loop's timers (no goroutine, no runtime timer),
// and one that then stays silent for PongTimeout is cut: OnClose gets
// ErrPongTimeout. A server behind a proxy or a NAT that drops idle flows
// keeps its clients with 30 s and 10 s, say; the example pings at once.
func ExampleOptions_keepalive() {
	url, stop := serveOptions(websocket.Options{
		Handler:      keepaliveLogger{},
		PingInterval: 50 * time.Millisecond, // 30 * time.Second in earnest
		PongTimeout:  time.Second,           // 10 * time.Second
	})
	defer stop()

	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	p := pingPrinter{got: make(chan struct{})}
	d := &websocket.Dialer{Options: websocket.Options{Handler: p, Engine: e}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := d.Dial(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	<-p.got
	c.Close(websocket.StatusNormalClosure, "")
	// Output: pinged by the server
}
