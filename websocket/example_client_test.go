package websocket_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/galeio/gale/websocket"
)

// A client: the Dialer does the handshake on its engine's loops, and the
// connection's messages go to its Handler there, as a server's do.
func ExampleDialer() {
	url, stop := serveEcho(websocket.Options{}) // an echo server, as in ExampleUpgrader
	defer stop()

	e, err := websocket.NewEngine(engineOptions()) // the client's loops
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	p := printer{got: make(chan struct{})}
	d := &websocket.Dialer{
		Options:          websocket.Options{Handler: p, Engine: e},
		HandshakeTimeout: 5 * time.Second,
	}
	c, resp, err := d.Dial(context.Background(), url)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status)
	c.WriteMessage(websocket.TextMessage, []byte("hello, server"))
	<-p.got
	c.Close(websocket.StatusNormalClosure, "bye")
	// Output:
	// 101 Switching Protocols
	// text: hello, server
}

// hub keeps the open connections of a server, to broadcast to.
type hub struct {
	websocket.BaseHandler
	mu     sync.Mutex
	conns  []*websocket.Conn
	joined chan struct{}
}

func (h *hub) OnOpen(c *websocket.Conn) {
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
	h.joined <- struct{}{} // buffered: a callback must not block
}

func (h *hub) OnClose(c *websocket.Conn, err error) {
	h.mu.Lock()
	h.conns = slices.DeleteFunc(h.conns, func(x *websocket.Conn) bool { return x == c })
	h.mu.Unlock()
}

func (h *hub) broadcast(typ websocket.MessageType, data []byte) int {
	h.mu.Lock()
	conns := slices.Clone(h.conns)
	h.mu.Unlock()
	return websocket.Broadcast(conns, typ, data)
}

// counter counts the messages its connections receive.
type counter struct {
	websocket.BaseHandler
	wg *sync.WaitGroup
}

func (n counter) OnMessage(*websocket.Conn, websocket.MessageType, []byte) { n.wg.Done() }

// Broadcast sends one message to many connections, framing (and
// compressing) it once; a connection that cannot take it (closed, or
// its queue full) does not hold the others back.
func ExampleBroadcast() {
	const clients = 3
	h := &hub{joined: make(chan struct{}, clients)}
	url, stop := serveOptions(websocket.Options{Handler: h})
	defer stop()

	e, err := websocket.NewEngine(engineOptions())
	if err != nil {
		panic(err)
	}
	defer e.Stop()
	var got sync.WaitGroup
	got.Add(clients)
	d := &websocket.Dialer{Options: websocket.Options{Handler: counter{wg: &got}, Engine: e}}
	for range clients {
		if _, _, err := d.Dial(context.Background(), url); err != nil {
			fmt.Println(err)
			return
		}
		<-h.joined
	}

	n := h.broadcast(websocket.TextMessage, []byte("news for all"))
	got.Wait()
	fmt.Println("sent to", n, "connections")
	// Output: sent to 3 connections
}
