// Aio-proxy is a TCP proxy on gale's aio: it accepts clients, dials the
// upstream for each, and copies bytes both ways with asynchronous reads
// and writes, passing a half-close through with CloseWrite. Try it with
// the echo server:
//
//	go run ./examples/echo-server -addr 127.0.0.1:8080 &
//	go run ./examples/aio-proxy -addr 127.0.0.1:8000 -upstream 127.0.0.1:8080
//	nc 127.0.0.1 8000
//
// Each proxied connection is two directions, client to upstream and
// upstream to client, and each direction is one request at a time: a read
// completes, its bytes are written to the other side, the write
// completes, the next read is submitted. So a direction never holds more
// than one read's worth of bytes, and a slow receiver slows its sender
// down instead of filling the proxy's memory.
//
// Buffers: reads use the watcher's swap buffer (a nil buffer), and the
// bytes of a read are copied into a buffer from a pool for the write,
// which goes back to the pool when the write completes. A copy is needed
// because swap data is valid only until the next WaitIO, and the write
// outlives it. The copy buys memory: an idle connection, which for a
// proxy is most of them most of the time, holds no buffer at all, where a
// buffer per direction would hold two for life.
//
// Ends: a read that reaches end of file ends its direction, and the proxy
// passes the half-close on with CloseWrite (the other side reads end of
// file and may still answer). Once both directions have ended, or as soon
// as either fails (a reset, a write error), both connections are freed.
package main

import (
	"context"
	"errors"
	"flag"
	"io"
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
	addr := flag.String("addr", "127.0.0.1:8000", "address to listen on")
	upstream := flag.String("upstream", "127.0.0.1:8080", "address to proxy to")
	flag.Parse()

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	log.Println("proxy listening on", ln.Addr(), "for", *upstream)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, ln, *upstream, log.Default()); err != nil {
		log.Fatal(err)
	}
}

// dialTimeout bounds the dial of the upstream for one client.
const dialTimeout = 5 * time.Second

// run proxies the clients of ln to upstream until ctx is done or accepting
// fails. It closes ln and the watcher before it returns, and returns only
// once its goroutines have exited.
func run(ctx context.Context, ln net.Listener, upstream string, logger *log.Logger) error {
	w, err := aio.NewWatcher()
	if err != nil {
		ln.Close()
		return err
	}
	p := &proxy{w: w, upstream: upstream, log: logger}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.serve()
	}()
	stopClose := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopClose()

	err = p.acceptLoop(ctx, ln)
	ln.Close()
	p.dials.Wait()
	w.Close() // releases every connection; serve returns
	<-done
	if ctx.Err() != nil && errors.Is(err, net.ErrClosed) {
		return nil // shut down on request
	}
	return err
}

// proxy is the program's state shared by its goroutines; everything in
// it is safe for concurrent use.
type proxy struct {
	w        *aio.Watcher
	upstream string
	log      *log.Logger
	dials    sync.WaitGroup // the goroutines dialing the upstream
	bufs     sync.Pool      // *[]byte of bufSize, for writes
}

// bufSize is the size of the write buffers: the watcher's swap-buffer
// chunk (aio.NewWatcher's 64 KiB), the most one read can bring.
const bufSize = 64 << 10

// acceptLoop accepts clients and dials the upstream for each on a
// goroutine of its own, so a slow upstream does not hold up accepting. It
// returns the error that ended accepting.
func (p *proxy) acceptLoop(ctx context.Context, ln net.Listener) error {
	d := net.Dialer{Timeout: dialTimeout}
	for {
		client, err := ln.Accept()
		if err != nil {
			return err
		}
		p.dials.Go(func() {
			up, err := d.DialContext(ctx, "tcp", p.upstream)
			if err != nil {
				p.log.Printf("client %v: upstream: %v", client.RemoteAddr(), err)
				client.Close()
				return
			}
			p.start(client, up)
		})
	}
}

// pair is one proxied connection. Its fields other than dirs' fixed ones
// belong to the serve goroutine.
type pair struct {
	dirs   [2]direction // client to upstream, upstream to client
	ended  int          // directions that reached end of file
	closed bool         // both conns freed: late completions are ignored
}

// direction copies from one conn to the other. It is the context of its
// requests, so a completion leads back to it.
type direction struct {
	pr       *pair
	from, to net.Conn
	buf      *[]byte // the write in flight's buffer, from the pool
}

// start begins proxying between client and up: a first read on each,
// which delegates both to the watcher.
func (p *proxy) start(client, up net.Conn) {
	p.log.Printf("client %v: proxying to %v", client.RemoteAddr(), up.RemoteAddr())
	pr := &pair{}
	pr.dirs[0] = direction{pr: pr, from: client, to: up}
	pr.dirs[1] = direction{pr: pr, from: up, to: client}
	// From the first Read on, the pair belongs to serve: touch nothing
	// but the two conns here.
	for i := range pr.dirs {
		d := &pr.dirs[i]
		if err := p.w.Read(d, d.from, nil); err != nil {
			// The watcher is closed: the proxy is shutting down. A conn
			// Read did not delegate is still ours to close (Close of a
			// delegated one does nothing).
			client.Close()
			up.Close()
			return
		}
	}
}

// serve handles completions until the watcher is closed.
func (p *proxy) serve() {
	for {
		results, err := p.w.WaitIO()
		if err != nil {
			return // aio.ErrWatcherClosed
		}
		for _, res := range results {
			d := res.Context.(*direction)
			if res.Operation == aio.OpRead {
				p.readDone(d, res)
			} else {
				p.writeDone(d, res)
			}
		}
	}
}

// readDone passes what a read brought to the other side: its bytes, or
// its end of file as a half-close.
func (p *proxy) readDone(d *direction, res aio.OpResult) {
	switch {
	case d.pr.closed:
	case res.Error == io.EOF:
		if err := p.w.CloseWrite(d.to); err != nil {
			p.fail(d.pr, "half-close", err)
			return
		}
		if d.pr.ended++; d.pr.ended == 2 {
			p.close(d.pr)
		}
	case res.Error != nil:
		p.fail(d.pr, "read", res.Error)
	default:
		b := p.getBuf()
		n := copy(*b, res.Buffer[:res.Size])
		d.buf = b
		if err := p.w.Write(d, d.to, (*b)[:n]); err != nil {
			p.fail(d.pr, "write", err)
		}
	}
}

// writeDone reads again once the bytes of the last read are out.
func (p *proxy) writeDone(d *direction, res aio.OpResult) {
	p.bufs.Put(d.buf)
	d.buf = nil
	switch {
	case d.pr.closed:
	case res.Error != nil:
		p.fail(d.pr, "write", res.Error)
	default:
		if err := p.w.Read(d, d.from, nil); err != nil {
			p.fail(d.pr, "read", err)
		}
	}
}

func (p *proxy) getBuf() *[]byte {
	if b, ok := p.bufs.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, bufSize)
	return &b
}

// fail logs why pr ends early and closes it.
func (p *proxy) fail(pr *pair, op string, err error) {
	if !errors.Is(err, net.ErrClosed) {
		p.log.Printf("client %v: %s: %v", pr.dirs[0].from.RemoteAddr(), op, err)
	}
	p.close(pr)
}

// close frees both conns of pr. Requests still pending on them complete
// with aio.ErrConnClosed, and serve ignores them.
func (p *proxy) close(pr *pair) {
	if pr.closed {
		return
	}
	pr.closed = true
	p.w.Free(pr.dirs[0].from)
	p.w.Free(pr.dirs[1].from)
}
