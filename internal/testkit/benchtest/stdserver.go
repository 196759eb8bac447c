package benchtest

import (
	"net"
	"sync"
	"testing"
)

// Listen returns a TCP listener on a free port of 127.0.0.1, or fails tb.
// Loopback keeps the network out of what the benchmarks measure.
func Listen(tb testing.TB) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("net.Listen(tcp, 127.0.0.1:0) = %v, want nil", err)
	}
	return ln
}

// ListenStdEcho starts a std net echo server (StartStdEcho) on a new
// loopback listener and returns its address and the function that stops
// it.
func ListenStdEcho(tb testing.TB, bufSize int) (addr string, stop func()) {
	tb.Helper()
	ln := Listen(tb)
	return ln.Addr().String(), StartStdEcho(ln, bufSize)
}

// StartStdEcho serves ln with a goroutine per connection, the design gale
// is compared with: each connection reads into its own bufSize buffer and
// writes back what it read. (Not io.Copy: between two *net.TCPConn it
// splices in the kernel, which is not the design being compared.)
//
// stop closes ln and every connection and waits for the server's
// goroutines, so no descriptor or goroutine outlives the benchmark. Call
// it once, from one goroutine.
func StartStdEcho(ln net.Listener, bufSize int) (stop func()) {
	s := &stdServer{conns: make(map[net.Conn]struct{})}
	s.wg.Add(1)
	go s.accept(ln, bufSize)
	return func() {
		ln.Close()
		s.mu.Lock()
		s.closed = true
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	}
}

// stdServer is the state of one StartStdEcho server.
type stdServer struct {
	wg sync.WaitGroup // the accept goroutine and one per connection

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // open connections, for stop to close
	closed bool                  // stop ran: close what Accept still returns
}

// accept runs until ln is closed. Its own count in wg stays above 0 until
// it returns, so the wg.Add of a connection never races with wg.Wait.
func (s *stdServer) accept(ln net.Listener, bufSize int) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c, bufSize)
	}
}

// serve echoes c until a read or write fails, then forgets and closes it.
func (s *stdServer) serve(c net.Conn, bufSize int) {
	defer s.wg.Done()
	echo(c, make([]byte, bufSize))
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	c.Close()
}

// echo writes back what c reads into buf. Bytes read together with an
// error are still echoed, as io.Reader allows n > 0 with err != nil.
func echo(c net.Conn, buf []byte) {
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
