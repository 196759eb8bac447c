// Push-server is the push server of gaio's README, written for gale: every
// tick it writes the time to every connected client. Completions and new
// connections reach the program's main loop over channels, so the loop
// owns the list of clients and needs no lock. Try it with
//
//	go run ./examples/push-server -addr 127.0.0.1:8080 -interval 1s
//	nc 127.0.0.1 8080
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/galeio/gale/aio"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	interval := flag.Duration("interval", time.Second, "time between pushes")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("push server listening on", ln.Addr(), "- connect with nc or telnet to receive pushes")

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, ln, *interval, log.Default()); err != nil {
		log.Fatal(err)
	}
}

// run pushes the time to every client of ln each interval until ctx is
// done. It closes ln and the watcher before it returns, and returns only
// once its goroutines have exited.
func run(ctx context.Context, ln net.Listener, interval time.Duration, logger *log.Logger) error {
	w, err := aio.NewWatcher()
	if err != nil {
		ln.Close()
		return err
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()

	chConn := make(chan net.Conn)
	chIO := make(chan aio.OpResult)
	quit := make(chan struct{}) // closed when the main loop ends
	var wg sync.WaitGroup

	// The WaitIO goroutine forwards completions to the main loop. Only
	// writes are submitted, so no result points into the swap buffer and
	// a result stays usable after the next WaitIO.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			results, err := w.WaitIO()
			if err != nil {
				return // aio.ErrWatcherClosed
			}
			for _, res := range results {
				select {
				case chIO <- res:
				case <-quit:
					return
				}
			}
		}
	}()

	// The accept goroutine passes new connections to the main loop.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			logger.Println("new client", conn.RemoteAddr())
			select {
			case chConn <- conn:
			case <-quit:
				conn.Close()
				return
			}
		}
	}()

	// The main loop. conns holds the clients ready for the next push: new
	// ones, and those whose last push has been written. A client whose
	// push is still in flight gets no new one, so a slow reader holds
	// back only its own pushes.
	var conns []net.Conn
	for done := false; !done; {
		select {
		case res := <-chIO:
			if res.Error != nil {
				// EPIPE or ECONNRESET: the client went away.
				logger.Println("client", res.Conn.RemoteAddr(), "gone:", res.Error)
				w.Free(res.Conn)
				continue
			}
			conns = append(conns, res.Conn)
		case t := <-ticker.C:
			push := []byte(t.Format(time.RFC3339Nano) + "\n")
			// Every client gets the same bytes; none of the writes
			// changes them.
			for _, conn := range conns {
				w.Write(nil, conn, push)
			}
			clear(conns)
			conns = conns[:0]
		case conn := <-chConn:
			conns = append(conns, conn)
		case <-ctx.Done():
			done = true
		}
	}

	close(quit)
	ln.Close()
	for _, conn := range conns {
		w.Free(conn) // closes the clients the watcher has not taken yet
	}
	w.Close() // releases the clients with a push in flight
	wg.Wait()
	return nil
}
