package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"time"

	"github.com/galeio/gale/engine"
)

// lookup answers each line after a slow call (a database, another
// service) that would stall its loop if it ran there. On a Pool it runs
// on a worker, one line at a time per connection, in order.
type lookup struct{ engine.BaseHandler }

func (lookup) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	for {
		line, err := in.ReadUntil('\n')
		if err != nil {
			return engine.None // a partial line waits for the next OnData
		}
		time.Sleep(10 * time.Millisecond) // the slow call
		c.Write([]byte("found " + string(line)))
	}
}

// Callbacks that block, on a Pool: the loops go on serving while they
// wait.
func ExampleNewPool() {
	pool := engine.NewPool(engine.PoolOptions{MaxWorkers: 16})
	e, err := engine.New(lookup{}, engine.Options{Pool: pool})
	if err != nil {
		log.Fatal(err)
	}
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Start(); err != nil {
		log.Fatal(err)
	}

	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	conn.Write([]byte("alice\nbob\ncarol\n"))
	r := bufio.NewReader(conn)
	for range 3 {
		reply, err := r.ReadString('\n')
		if err != nil {
			log.Fatal(err)
		}
		fmt.Print(strings.ToUpper(reply[:1]), reply[1:])
	}
	conn.Close()

	e.Shutdown(context.Background()) // waits for the pooled OnClose
	pool.Close()                     // then the pool's workers end
	// Output:
	// Found alice
	// Found bob
	// Found carol
}
