// Engine-http is HTTP/1.1 written by hand on package engine: a lesson
// in the engine's callbacks, not a server to build on. To serve a
// net/http Handler from gale's loops use package httpd, which parses
// requests with net/http's own parser and runs any handler:
//
//	srv := &httpd.Server{Addr: ":8080", Handler: mux}
//	log.Fatal(srv.ListenAndServe())
//
// This program is kept, rather than turned into one more httpd example,
// for what httpd hides inside itself: framing a protocol in OnData, where
// an unfinished request head stays in the Inbound until the rest of it
// arrives; answering pipelined requests with one write per batch, at
// most flushSize bytes; state kept across callbacks (the body bytes
// still to skip); a timer (OnTick) that renews the Date line once a
// second; a cap on the request head that bounds a connection's memory
// whatever the client sends; and a hot path that allocates nothing.
//
// Its HTTP is the least that stays safe with real clients: every request
// is answered "Hello, World!"; heads are parsed strictly, what invites
// request smuggling refused with 400; a body with a Content-Length is
// skipped, a chunked one refused with 501; HTTP/1.0 and 1.1 keep-alive
// and pipelining work. engine-https is its twin on ListenTLS. Try it
// with
//
//	go run ./examples/engine-http -addr 127.0.0.1:8080
//	curl -v http://127.0.0.1:8080/
//	wrk -t2 -c50 -d5s http://127.0.0.1:8080/
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	loops := flag.Int("loops", 0, "event loops (0: GOMAXPROCS)")
	reusePort := flag.Bool("reuseport", false, "one listening socket per loop (SO_REUSEPORT)")
	flag.Parse()

	e, a, err := serve(*addr, engine.Options{Loops: *loops, ReusePort: *reusePort})
	if err != nil {
		log.Fatal(err)
	}
	log.Println("http server listening on", a)

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

// serve starts an engine serving HTTP on addr (TCP) and returns it with
// the address it listens on. The caller stops it with Shutdown or Stop.
func serve(addr string, opts engine.Options) (*engine.Engine, net.Addr, error) {
	e, err := engine.New(newServer(), opts)
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

const body = "Hello, World!"

// flushSize is the size of responses at which the server writes them out
// before it parses more pipelined requests.
const flushSize = 64 << 10

// server is the engine's handler. Its callbacks run on every loop at
// once: the Date line is shared through an atomic pointer, the output
// buffers through a pool, and the rest is per connection.
type server struct {
	engine.BaseHandler
	date atomic.Pointer[[]byte] // "Date: ...\r\n", renewed every second
	bufs sync.Pool              // of *[]byte
}

// connState is a connection's: the body bytes still to skip.
type connState struct {
	skip       int64 // bytes of a request body not received yet
	closeAfter bool  // close once they are: the request asked to
}

func newServer() *server {
	s := &server{}
	s.setDate(time.Now())
	s.bufs.New = func() any {
		b := make([]byte, 0, 4<<10)
		return &b
	}
	return s
}

// setDate formats the Date field for t (RFC 9110 §6.6.1).
func (s *server) setDate(t time.Time) {
	b := append([]byte("Date: "), t.UTC().Format(http.TimeFormat)...)
	b = append(b, "\r\n"...)
	s.date.Store(&b)
}

// OnTick renews the Date line at each second, so that responses copy it
// instead of formatting the time.
func (s *server) OnTick() (time.Duration, engine.Action) {
	now := time.Now()
	s.setDate(now)
	return now.Truncate(time.Second).Add(time.Second).Sub(now), engine.None
}

// OnOpen gives the connection its state.
func (s *server) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	c.SetContext(&connState{})
	return nil, engine.None
}

// OnData answers the whole requests received. An unfinished request head
// stays in the Inbound, which presents it again with the rest of its
// bytes.
func (s *server) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	st := c.Context().(*connState)
	bp := s.bufs.Get().(*[]byte)
	out := (*bp)[:0]
	defer func() {
		if cap(out) <= 4*flushSize {
			*bp = out[:0]
			s.bufs.Put(bp)
		}
	}()
	for {
		b, _ := in.Peek(in.Len())
		var n int
		var more, quit bool
		n, out, more, quit = s.handle(st, b, out)
		in.Discard(n)
		if len(out) > 0 {
			_, err := c.Write(out) // copies what the socket does not take
			out = out[:0]
			if err != nil {
				return engine.Close
			}
		}
		if quit {
			return engine.Close
		}
		if !more {
			return engine.None
		}
	}
}

// handle answers the whole requests at the start of b, appending the
// responses to out, and returns the bytes it consumed: request heads and
// bodies. It stops once out holds flushSize bytes, reporting more, so
// that the caller writes them before calling again. quit means the
// connection must close once out is written: a request asked for it, or
// was refused.
func (s *server) handle(st *connState, b, out []byte) (n int, _ []byte, more, quit bool) {
	for {
		if st.skip > 0 {
			k := int(min(st.skip, int64(len(b)-n)))
			n += k
			if st.skip -= int64(k); st.skip > 0 {
				return n, out, false, false
			}
			if st.closeAfter {
				return n, out, false, true
			}
		}
		if n == len(b) {
			return n, out, false, false
		}
		if len(out) >= flushSize {
			return n, out, true, false
		}
		req, k, err := parseRequest(b[n:])
		if err != nil {
			return n, s.appendError(out, int(err.(statusError))), false, true
		}
		if k == 0 {
			return n, out, false, false // the head is still to come
		}
		n += k
		out = s.appendHello(out, req)
		st.skip, st.closeAfter = req.bodyLen, !req.keepAlive
		if st.skip == 0 && !req.keepAlive {
			return n, out, false, true
		}
	}
}

// appendHello appends the response to req.
func (s *server) appendHello(out []byte, req request) []byte {
	out = append(out, "HTTP/1.1 200 OK\r\n"...)
	out = append(out, *s.date.Load()...)
	out = append(out, "Content-Type: text/plain; charset=utf-8\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(body)), 10)
	out = append(out, "\r\n"...)
	switch {
	case !req.keepAlive:
		out = append(out, "Connection: close\r\n"...)
	case !req.http11:
		out = append(out, "Connection: keep-alive\r\n"...)
	}
	out = append(out, "\r\n"...)
	if !req.head {
		out = append(out, body...)
	}
	return out
}

// appendError appends a response with status code, after which the
// connection closes.
func (s *server) appendError(out []byte, code int) []byte {
	text := http.StatusText(code)
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, ' ')
	out = append(out, text...)
	out = append(out, "\r\n"...)
	out = append(out, *s.date.Load()...)
	out = append(out, "Content-Type: text/plain; charset=utf-8\r\nConnection: close\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(text)+1), 10)
	out = append(out, "\r\n\r\n"...)
	out = append(out, text...)
	return append(out, '\n')
}
