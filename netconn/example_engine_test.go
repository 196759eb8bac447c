package netconn_test

import (
	"bufio"
	"fmt"
	"log"
	"net"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/netconn"
)

// lines answers each line on the engine's loop, except "blocking": that
// hands the connection to a goroutine, which answers the next line with
// blocking calls and hands the connection back.
type lines struct{ engine.BaseHandler }

func (lines) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	if c.Context() != nil {
		return engine.None // on its way to the goroutine: the bytes go along
	}
	for {
		line, err := in.ReadUntil('\n')
		if err != nil {
			return engine.None
		}
		if string(line) == "blocking\n" {
			c.SetContext("moving")
			go serveBlocking(c) // FromEngine waits for the loop: not from OnData
			return engine.None
		}
		c.Write(append([]byte("engine: "), line...))
	}
}

func serveBlocking(ec *engine.Conn) {
	e := ec.Engine()
	c, err := netconn.FromEngine(ec) // the lines OnData left come first
	if err != nil {
		log.Print(err)
		return
	}
	// Byte by byte: what netconn received ahead of Read goes back to the
	// engine with the connection, what a bufio.Reader held would not.
	var line []byte
	b := make([]byte, 1)
	for len(line) == 0 || line[len(line)-1] != '\n' {
		if _, err := c.Read(b); err != nil {
			log.Print(err)
			c.Close()
			return
		}
		line = append(line, b[0])
	}
	c.Write(append([]byte("goroutine: "), line...))
	if _, err := c.ToEngine(e); err != nil { // OnData gets the rest
		log.Print(err)
	}
}

// ExampleFromEngine moves a connection from an engine's loop to a
// goroutine and back, with the bytes each side received ahead.
func ExampleFromEngine() {
	e, err := engine.New(lines{}, engine.Options{})
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
	defer e.Stop()

	client, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	client.Write([]byte("hello\nblocking\nin a goroutine\nback\n"))
	replies := bufio.NewScanner(client)
	for range 3 {
		replies.Scan()
		fmt.Println(replies.Text())
	}
	// Output:
	// engine: hello
	// goroutine: in a goroutine
	// engine: back
}
