package engine_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/galeio/gale/engine"
)

// echo writes back every byte it receives.
type echo struct{ engine.BaseHandler }

func (echo) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	c.Write(in.Bytes()) // written now, or copied into c's queue
	in.Discard(in.Len())
	return engine.None
}

// An echo server on a loopback port, and a client.
func ExampleNew() {
	e, err := engine.New(echo{}, engine.Options{})
	if err != nil {
		log.Fatal(err)
	}
	addr, err := e.Listen("tcp", "127.0.0.1:0") // port 0: any free port
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Start(); err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown(context.Background())

	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("hello, engine"))
	reply := make([]byte, len("hello, engine"))
	if _, err := io.ReadFull(conn, reply); err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(reply))
	// Output: hello, engine
}

// shout is a line protocol: it answers each line in capitals, and closes
// the connection on "bye".
type shout struct{ engine.BaseHandler }

func (shout) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	for {
		line, err := in.ReadUntil('\n')
		if err != nil {
			// No whole line left. The engine keeps the partial one and
			// presents it again with the next bytes; bound how much of
			// it there may be.
			if in.Len() > 1024 {
				return engine.Close
			}
			return engine.None
		}
		if string(line) == "bye\n" {
			c.Write([]byte("BYE\n"))
			return engine.Close // after BYE is written
		}
		c.Write(bytes.ToUpper(line))
	}
}

// A line protocol: OnData takes the whole lines and leaves a partial one
// for later.
func ExampleInbound_ReadUntil() {
	e, err := engine.New(shout{}, engine.Options{Loops: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	e.Start()

	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	// The second line arrives in two pieces.
	for _, piece := range []string{"hello\nwor", "ld\n", "bye\n"} {
		conn.Write([]byte(piece))
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			fmt.Println("then", err)
			break
		}
		fmt.Print(line)
	}
	// Output:
	// HELLO
	// WORLD
	// BYE
	// then EOF
}

// handoff passes each new connection to the program.
type handoff struct {
	engine.BaseHandler
	conns chan *engine.Conn
}

func (h handoff) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	h.conns <- c // buffered: a callback must not wait
	return nil, engine.None
}

// Writing to a connection from outside the engine's callbacks: Conn's
// methods are safe from any goroutine.
func ExampleConn_Write() {
	h := handoff{conns: make(chan *engine.Conn, 1)}
	e, err := engine.New(h, engine.Options{Loops: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	e.Start()

	client, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	c := <-h.conns
	c.Write([]byte("pushed from main\n"))
	line, err := bufio.NewReader(client).ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(line)
	// Output: pushed from main
}

// greeter greets each client and reports what the engine does.
type greeter struct{ engine.BaseHandler }

func (greeter) OnOpen(*engine.Conn) ([]byte, engine.Action) {
	return []byte("welcome\n"), engine.None
}

func (greeter) OnClose(_ *engine.Conn, err error) {
	fmt.Println("server: connection closed, err", err)
}

func (greeter) OnShutdown(*engine.Engine) { fmt.Println("server: stopped") }

// A graceful shutdown: no new connections, queued output written, then
// every connection closed (OnClose with a nil error) and OnShutdown.
func ExampleEngine_Shutdown() {
	e, err := engine.New(greeter{}, engine.Options{Loops: 1})
	if err != nil {
		log.Fatal(err)
	}
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	e.Start()

	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	greeting, err := r.ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print("client: ", greeting)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println("Shutdown:", e.Shutdown(ctx))
	_, err = r.ReadByte()
	fmt.Println("client:", err)
	// Output:
	// client: welcome
	// server: connection closed, err <nil>
	// server: stopped
	// Shutdown: <nil>
	// client: EOF
}

// farewell is a handler that says goodbye: to each connection when a
// graceful Shutdown begins (it is a Drainer), and to those that stay
// silent for too long (OnDeadline with ErrIdleTimeout).
type farewell struct{ engine.BaseHandler }

func (farewell) OnOpen(*engine.Conn) ([]byte, engine.Action) {
	return []byte("welcome\n"), engine.None
}

func (farewell) OnDrain(c *engine.Conn) { c.Write([]byte("server going down\n")) }

func (farewell) OnDeadline(c *engine.Conn, err error) engine.Action {
	if errors.Is(err, engine.ErrIdleTimeout) {
		c.Write([]byte("idle for too long\n"))
	}
	return engine.None
}

// startFarewell starts an engine with the farewell handler and returns it
// with a connected client that has read its welcome.
func startFarewell(o engine.Options) (*engine.Engine, net.Conn, *bufio.Reader) {
	e, err := engine.New(farewell{}, o)
	if err != nil {
		log.Fatal(err)
	}
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	e.Start()
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		log.Fatal(err)
	}
	r := bufio.NewReader(conn)
	r.ReadString('\n') // welcome: the server serves conn
	return e, conn, r
}

// A graceful Shutdown lets a Drainer say goodbye to every connection
// before it closes.
func ExampleDrainer() {
	e, conn, r := startFarewell(engine.Options{})
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go e.Shutdown(ctx)
	b, _ := io.ReadAll(r) // until end of file
	fmt.Print("client: ", string(b))
	<-e.Done()
	// Output: client: server going down
}

// A connection that sends nothing for ReadIdleTimeout is told so (by
// OnDeadline, with ErrIdleTimeout) before it is closed.
func ExampleOptions_readIdleTimeout() {
	e, conn, r := startFarewell(engine.Options{ReadIdleTimeout: 100 * time.Millisecond})
	defer e.Stop()
	defer conn.Close()
	b, _ := io.ReadAll(r) // until the server closes it
	fmt.Print("silent client: ", string(b))
	// Output: silent client: idle for too long
}
