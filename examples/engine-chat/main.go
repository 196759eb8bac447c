// Engine-chat is a line-based chat server on package engine. A client
// connects over TCP and sends lines ("\n" or "\r\n" at the end): the first
// is its nickname, and every later one goes to everyone else in the room
// as "nick: text". "/who" lists who is here and "/quit" leaves; joins and
// leaves are announced. Try it with
//
//	go run ./examples/engine-chat
//	nc 127.0.0.1 7070    (in two terminals or more)
//
// It is meant to be read as an introduction to the engine, and shows how
// a server keeps its promises to every client when some misbehave:
//
//   - A line longer than -max-line bytes gets an error and the connection
//     closes (Options.MaxInputBuffer backs that up).
//   - A client that does not read falls behind; it is cut when its
//     backlog passes -backlog bytes (Options.MaxWriteBuffer) or stays
//     unsent for -write-timeout (Conn.SetWriteDeadline), and -budget
//     bounds the output queued for all of them (Options.OutputBudget).
//   - A client that says nothing for -idle is told so and cut
//     (Options.ReadIdleTimeout); one that gives no nickname within
//     -nick-timeout too (Conn.SetReadDeadline).
//   - On SIGINT or SIGTERM every client reads "* server shutting down"
//     before end of file (engine.Drainer), within -shutdown.
//
// The room is shared by every loop: a mutex guards it, and a line is
// encoded once and that one buffer written to each client.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

// config holds the server's limits: the flags.
type config struct {
	loops       int
	maxLine     int           // longest line, in bytes, without its line end
	nickTimeout time.Duration // from connecting to a nickname
	idleTimeout time.Duration // silence before a client is cut
	// writeTimeout is how long a client may leave output unread: from
	// the moment output is queued for it until it has read it all.
	writeTimeout time.Duration
	backlog      int   // output queued for one client before it is cut
	budget       int64 // output queued for all clients before reading pauses
	log          *log.Logger
}

func main() {
	cfg := config{log: log.Default()}
	addr := flag.String("addr", "127.0.0.1:7070", "address to listen on")
	flag.IntVar(&cfg.loops, "loops", 0, "event loops (0: GOMAXPROCS)")
	flag.IntVar(&cfg.maxLine, "max-line", 4<<10, "longest line in bytes; a longer one ends the connection")
	flag.DurationVar(&cfg.nickTimeout, "nick-timeout", 30*time.Second, "time to send a nickname after connecting")
	flag.DurationVar(&cfg.idleTimeout, "idle", 5*time.Minute, "silence after which a client is cut")
	flag.DurationVar(&cfg.writeTimeout, "write-timeout", 30*time.Second, "time a client may leave output unread before it is cut")
	flag.IntVar(&cfg.backlog, "backlog", 256<<10, "bytes queued for a client before it is cut")
	flag.Int64Var(&cfg.budget, "budget", 64<<20, "bytes queued for all clients before the server stops reading")
	shutdown := flag.Duration("shutdown", 5*time.Second, "time the clients get to read the goodbye on shutdown")
	flag.Parse()
	if err := cfg.check(); err != nil {
		log.Fatal(err)
	}

	e, a, err := serve(*addr, newServer(cfg))
	if err != nil {
		log.Fatal(err)
	}
	log.Println("chat server listening on", a, "- connect with nc or telnet")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-ctx.Done():
	case <-e.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), *shutdown)
	defer cancel()
	if err := e.Shutdown(sctx); err != nil {
		log.Printf("shutdown: %v (clients still reading were cut)", err)
	}
}

// check reports limits that make no sense.
func (cfg *config) check() error {
	switch {
	case cfg.maxLine < maxNick*4:
		return fmt.Errorf("-max-line %d cannot hold a nickname of %d characters", cfg.maxLine, maxNick)
	case cfg.nickTimeout <= 0, cfg.idleTimeout <= 0, cfg.writeTimeout <= 0:
		return fmt.Errorf("-nick-timeout, -idle and -write-timeout must be positive")
	case cfg.backlog <= 0, cfg.budget <= 0:
		return fmt.Errorf("-backlog and -budget must be positive")
	}
	return nil
}

// options are the engine's options for cfg.
func (cfg *config) options() engine.Options {
	return engine.Options{
		Loops: cfg.loops,
		// OnData consumes every whole line and refuses a partial one
		// longer than maxLine, so it never leaves more than maxLine+1
		// bytes (a line and the "\r" of its "\r\n"). The engine's cap is
		// set just above: it is a backstop that never cuts a line the
		// handler would take, nor before the handler's error goes out.
		MaxInputBuffer: cfg.maxLine + 2,
		// A client that does not read has its output queued. Past
		// backlog bytes, several hundred lines, it is not going to catch
		// up: the next Write fails with ErrWriteBufferFull and the
		// connection closes, its queue dropped; OnClose logs it. Reading
		// from it pauses long before, at WriteHighWater's default (64
		// KiB, or half the backlog if that is less): a client that far
		// behind does not get to talk.
		MaxWriteBuffer: cfg.backlog,
		// MaxWriteBuffer bounds each client, not their number: a
		// thousand slow clients could hold a thousand backlogs. Past the
		// budget, the engine stops reading from the clients whose lines
		// fill those queues, so the room slows down instead of memory
		// growing, until the write deadlines cut the clients that stall
		// (see session.send) and their queues are dropped.
		OutputBudget: cfg.budget,
		// A client that sends nothing for idleTimeout is cut after
		// OnDeadline said goodbye. ReadIdleTimeout, not IdleTimeout: a
		// client that only listens is sent lines, which IdleTimeout
		// would count as activity.
		ReadIdleTimeout: cfg.idleTimeout,
		// The read deadline (the nickname's) and the write deadline (a
		// client that stalls) both end the connection at once: Close
		// would wait for queued output that a stalled client never
		// takes.
		CloseOnDeadline: true,
	}
}

// serve starts an engine serving srv's room on addr (TCP) and returns it
// with the address it listens on. The caller stops it with Shutdown or
// Stop.
func serve(addr string, srv *server) (*engine.Engine, net.Addr, error) {
	e, err := engine.New(srv, srv.cfg.options())
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
