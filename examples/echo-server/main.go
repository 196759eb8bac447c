// Echo-server is the echo server of gaio's README, written for gale: one
// goroutine waits for completions and sends back everything it reads,
// while the main goroutine accepts connections and submits the first read
// of each. Try it with
//
//	go run ./examples/echo-server -addr 127.0.0.1:8080
//	nc 127.0.0.1 8080
package main

import (
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/galeio/gale/aio"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("echo server listening on", ln.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, ln, log.Default()); err != nil {
		log.Fatal(err)
	}
}

// run serves ln until ctx is done or accepting fails. It closes ln and the
// watcher before it returns, and returns only once its goroutines have
// exited.
func run(ctx context.Context, ln net.Listener, logger *log.Logger) error {
	w, err := aio.NewWatcher()
	if err != nil {
		ln.Close()
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		echoServer(w)
	}()
	stopClose := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopClose()

	err = acceptLoop(ln, w, logger)
	ln.Close()
	w.Close() // releases every connection; echoServer returns
	<-done
	if ctx.Err() != nil && errors.Is(err, net.ErrClosed) {
		return nil // shut down on request
	}
	return err
}

// echoServer waits for completions and writes back what each read
// brought. A connection does not read again until its echo is written, so
// the one buffer it was given at accept time is all it needs. It returns
// once w is closed.
func echoServer(w *aio.Watcher) {
	for {
		results, err := w.WaitIO()
		if err != nil {
			return // aio.ErrWatcherClosed
		}
		for _, res := range results {
			if res.Error != nil {
				// io.EOF when the client hung up. Free closes the socket
				// now instead of when the garbage collector finds it.
				w.Free(res.Conn)
				continue
			}
			switch res.Operation {
			case aio.OpRead:
				// Send back what arrived; the write keeps using the
				// buffer until it completes.
				w.Write(nil, res.Conn, res.Buffer[:res.Size])
			case aio.OpWrite:
				// The echo is out: read again into the whole buffer.
				w.Read(nil, res.Conn, res.Buffer[:cap(res.Buffer)])
			}
		}
	}
}

// acceptLoop hands every new connection to w by submitting its first read.
// It returns the error that ended accepting.
func acceptLoop(ln net.Listener, w *aio.Watcher, logger *log.Logger) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		logger.Println("new client", conn.RemoteAddr())
		if err := w.Read(nil, conn, make([]byte, 128)); err != nil {
			conn.Close()
			return err
		}
	}
}
