package benchrun

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/galeio/gale/internal/procfs"
)

// idle measures what an idle connection costs the server: it reads the
// server's resident memory, opens c.Conns connections that each echo one
// byte (so the server has set up everything it keeps per connection) and
// then stay open, waits for the server to settle, and reads the memory
// again. The figure is the growth divided by the connections. In
// tls-idle each connection completes its handshake before its echo.
func idle(ch *Child, c Case, _ Options) (result, error) {
	dial := dialerFor(c)
	warm, err := dialAll(dial, ch.Addr(), 1)
	if err != nil {
		return result{}, err
	}
	defer closeAll(warm)
	if err := echoOnce(warm[0], 1, 0); err != nil {
		return result{}, err
	}
	settle()
	rss0, err := procfs.RSS(ch.PID())
	if err != nil {
		return result{}, err
	}
	conns, err := dialEcho(dial, ch.Addr(), c.Conns)
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

// dialEcho opens n connections, 64 at a time, and has each echo one byte.
func dialEcho(dial dialFunc, addr string, n int) ([]net.Conn, error) {
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
				errs[i] = echoOnce(c, 1, byte(i))
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
