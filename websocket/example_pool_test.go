package websocket_test

import (
	"strings"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// slowUpper answers each message after a slow call (a database, another
// service). On a pool it blocks a worker, not the loop, and a
// connection's messages are still answered in order.
type slowUpper struct{ websocket.BaseHandler }

func (slowUpper) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	time.Sleep(10 * time.Millisecond) // the slow call
	c.WriteMessage(typ, []byte(strings.ToUpper(string(data))))
}

// Callbacks that block, on an engine.Pool: the loops go on reading and
// answering the other connections meanwhile.
func ExampleOptions_pool() {
	pool := engine.NewPool(engine.PoolOptions{MaxWorkers: 16})
	defer pool.Close() // after the server: it waits for the callbacks queued

	url, stop := serveOptions(websocket.Options{Handler: slowUpper{}, Pool: pool})
	defer stop()
	say(url, websocket.Options{}, "hello, pool")
	// Output: text: HELLO, POOL
}
