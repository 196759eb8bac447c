package benchrun

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/galeio/gale/internal/tools/procfs"
)

// idle measures what an idle connection costs the server: it reads the
// server's resident memory, opens c.Conns connections that each echo one
// byte (so the server has set up everything it keeps per connection) and
// then stay open, waits for the server to settle, and reads the memory
// again. The figure is the growth divided by the connections. In
// tls-idle each connection completes its handshake before its echo; in
// http-idle each makes one keep-alive GET in place of the echo, in
// h2-idle one GET over HTTP/2 (h2Greet).
func idle(ch *Child, c Case, _ Options) (result, error) {
	dial, greet := dialerFor(c), greeterFor(c)
	warm, err := dialAll(dial, ch.Addr(), 1)
	if err != nil {
		return result{}, err
	}
	defer closeAll(warm)
	if err := greet(warm[0], 0); err != nil {
		return result{}, err
	}
	settle()
	rss0, err := procfs.RSS(ch.PID())
	if err != nil {
		return result{}, err
	}
	conns, err := dialGreet(dial, greet, ch.Addr(), c.Conns)
	defer closeAll(conns)
	if err != nil {
		return result{}, err
	}
	settle()
	rss1, err := procfs.RSS(ch.PID())
	if err != nil {
		return result{}, err
	}
	if err := ch.atPeak(); err != nil {
		return result{}, err
	}
	n := int64(len(conns))
	return result{value: float64(rss1-rss0) / float64(n), msgs: n, bytes: n}, nil
}

// settle gives the server time to finish what the last connections
// started (a garbage collection, returning memory), so the reading is of
// a quiet server.
func settle() { time.Sleep(500 * time.Millisecond) }

// greetFunc is an idle connection's one exchange, which has the server
// set up what it keeps per connection; seed varies what is sent.
type greetFunc func(c net.Conn, seed byte) error

// greeterFor returns the exchange of case c's idle connections: an echo
// of one byte, or for an HTTP case one GET of HelloPath, over HTTP/2 for
// an HTTP/2 case.
func greeterFor(c Case) greetFunc {
	switch c.kind() {
	case kindHTTP:
		return func(c net.Conn, _ byte) error { return getHello(c) }
	case kindH2:
		return func(c net.Conn, _ byte) error { return h2Greet(c) }
	}
	return func(c net.Conn, seed byte) error { return echoOnce(c, 1, seed) }
}

// dialGreet opens n connections, 64 at a time, and has each make its
// exchange with greet.
func dialGreet(dial dialFunc, greet greetFunc, addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	next := make(chan int)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c, err := dial(addr)
				if err != nil {
					errs[i] = fmt.Errorf("dial %d of %d: %w", i+1, n, err)
					continue
				}
				conns[i] = c
				errs[i] = greet(c, byte(i))
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	open := conns[:0]
	for _, c := range conns {
		if c != nil {
			open = append(open, c)
		}
	}
	return open, errors.Join(errs...)
}
