// Engine-push is a push server on package engine: every interval it
// writes a numbered line with the time to every connected client. The
// engine's OnTick drives the pushes; the handler keeps the set of clients
// from OnOpen and OnClose. Try it with
//
//	go run ./examples/engine-push -addr 127.0.0.1:7001 -interval 1s
//	nc 127.0.0.1 7001
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7001", "address to listen on")
	interval := flag.Duration("interval", time.Second, "time between pushes")
	loops := flag.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	flag.Parse()
	if *interval <= 0 {
		log.Fatal("-interval must be positive")
	}

	e, a, err := serve(*addr, newPusher(*interval), engine.Options{Loops: *loops})
	if err != nil {
		log.Fatal(err)
	}
	log.Println("push server listening on", a, "- connect with nc or telnet to receive pushes")

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

// pusher broadcasts a line to its clients at every tick.
//
// OnOpen and OnClose run on the loop of their connection, and the loops
// run at the same time, so the set of clients is guarded by a mutex.
// OnTick runs on loop 0 only, one tick at a time: the fields it alone
// uses need no lock.
type pusher struct {
	engine.BaseHandler // OnData discards what clients send
	interval           time.Duration

	mu      sync.Mutex
	clients map[*engine.Conn]struct{}

	// OnTick's, reused from tick to tick.
	seq   uint64
	line  []byte
	batch []*engine.Conn
}

func newPusher(interval time.Duration) *pusher {
	return &pusher{interval: interval, clients: make(map[*engine.Conn]struct{})}
}

// OnOpen adds c to the clients.
func (p *pusher) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	p.mu.Lock()
	p.clients[c] = struct{}{}
	p.mu.Unlock()
	return nil, engine.None
}

// OnClose removes c from the clients.
func (p *pusher) OnClose(c *engine.Conn, _ error) {
	p.mu.Lock()
	delete(p.clients, c)
	p.mu.Unlock()
}

// OnTick writes "tick N TIME\n" to every client and asks for the next
// tick after the interval. The set is copied under the lock and written
// to after it, so OnOpen and OnClose on other loops do not wait for the
// writes. A connection closed meanwhile just fails its Write; a client
// too slow to take its lines closes with engine.ErrWriteBufferFull once
// Options.MaxWriteBuffer bytes are queued for it. Either way OnClose
// removes it.
func (p *pusher) OnTick() (time.Duration, engine.Action) {
	p.seq++
	p.line = append(p.line[:0], "tick "...)
	p.line = strconv.AppendUint(p.line, p.seq, 10)
	p.line = append(p.line, ' ')
	p.line = time.Now().UTC().AppendFormat(p.line, time.RFC3339Nano)
	p.line = append(p.line, '\n')

	p.mu.Lock()
	for c := range p.clients {
		p.batch = append(p.batch, c)
	}
	p.mu.Unlock()
	for _, c := range p.batch {
		c.Write(p.line) // copies what it cannot write at once
	}
	clear(p.batch) // drop the references until the next tick
	p.batch = p.batch[:0]
	return p.interval, engine.None
}

// count returns the number of clients.
func (p *pusher) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.clients)
}

// serve starts an engine pushing p's lines to the clients of addr (TCP)
// and returns it with the address it listens on. The caller stops it
// with Shutdown or Stop.
func serve(addr string, p *pusher, opts engine.Options) (*engine.Engine, net.Addr, error) {
	e, err := engine.New(p, opts)
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
