// Engine-echo is an echo server on package engine: every byte a client
// sends comes back. OnData writes what arrived with Conn.Write, which
// writes to the socket at once when nothing is queued, so an echo costs
// one system call and no copy. Try it with
//
//	go run ./examples/engine-echo -addr 127.0.0.1:7000
//	nc 127.0.0.1 7000
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7000", "address to listen on")
	loops := flag.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	reusePort := flag.Bool("reuseport", false, "one listening socket per loop (SO_REUSEPORT)")
	flag.Parse()

	e, a, err := serve(*addr, engine.Options{Loops: *loops, ReusePort: *reusePort})
	if err != nil {
		log.Fatal(err)
	}
	log.Println("echo server listening on", a)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case <-e.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.Shutdown(sctx)
}

// echo sends back whatever it receives.
type echo struct{ engine.BaseHandler }

// OnData writes every unconsumed byte back. Write copies what the socket
// does not take at once, so the bytes may be consumed as soon as it
// returns; once the connection queues more than Options.WriteHighWater
// the engine stops reading from it until the client catches up.
func (echo) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	if _, err := c.Write(in.Bytes()); err != nil {
		return engine.Close
	}
	in.Discard(in.Len())
	return engine.None
}

// serve starts an engine echoing on addr (TCP) and returns it with the
// address it listens on. The caller stops it with Shutdown or Stop.
func serve(addr string, opts engine.Options) (*engine.Engine, net.Addr, error) {
	e, err := engine.New(echo{}, opts)
	if err != nil {
		return nil, nil, err
	}
	a, err := e.Listen("tcp", addr)
	if err == nil {
		err = e.Start()
	}
	if err != nil {
		e.Stop()
		return nil, nil, err
	}
	return e, a, nil
}
