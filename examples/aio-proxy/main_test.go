package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

// testTimeout bounds every wait of the tests: a dial, a return, and each
// read and write of a connection (progressConn), so that a slow machine
// slows the tests down but only a stall fails them.
const testTimeout = 10 * time.Second

// startProxy runs the proxy on a listener of its own, to upstream, and
// returns its address. At cleanup it stops the proxy and checks that run
// returned nil.
func startProxy(t *testing.T, upstream string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, ln, upstream, log.New(io.Discard, "", 0)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-errc:
			if err != nil {
				t.Errorf("run = %v, want nil after cancel", err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("run did not return within %v of cancel", testTimeout)
		}
	})
	return ln.Addr().String()
}

// startUpstream serves 127.0.0.1 with handle, a goroutine per connection,
// and returns the address. At cleanup it closes the listener and every
// connection and waits for the handlers.
func startUpstream(t *testing.T, handle func(c progressConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { handle(progress(c)) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// progressConn is a TCP connection each of whose reads and writes must
// make progress within testTimeout: it sets the deadline of each as it
// starts. io.Copy goes through them too (ReadFrom, WriteTo), not through
// TCPConn's splice.
type progressConn struct{ *net.TCPConn }

func progress(c net.Conn) progressConn { return progressConn{c.(*net.TCPConn)} }

func (c progressConn) Read(b []byte) (int, error) {
	c.SetReadDeadline(time.Now().Add(testTimeout))
	return c.TCPConn.Read(b)
}

func (c progressConn) Write(b []byte) (int, error) {
	c.SetWriteDeadline(time.Now().Add(testTimeout))
	return c.TCPConn.Write(b)
}

func (c progressConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{c}, r)
}

func (c progressConn) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(w, struct{ io.Reader }{c})
}

// echo sends back what it reads and passes the client's half-close back.
func echo(c progressConn) {
	defer c.Close()
	if _, err := io.Copy(c, c); err == nil {
		c.CloseWrite()
		io.Copy(io.Discard, c)
	}
}

// dial connects to the proxy, with every operation bounded.
func dial(t *testing.T, addr string) progressConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatalf("Dial(proxy) = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return progress(c)
}

// roundTrip sends n pattern bytes through the echo upstream, reading the
// echo concurrently, then half-closes and expects exactly the same bytes
// back followed by end of file.
func roundTrip(c progressConn, n int, seed uint64) error {
	msg := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := range msg {
		msg[i] = byte(rng.Uint32())
	}
	werr := make(chan error, 1)
	go func() {
		// Uneven writes, so the proxy sees reads of every size.
		for rest := msg; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(100<<10))
			if _, err := c.Write(rest[:k]); err != nil {
				werr <- err
				return
			}
			rest = rest[k:]
		}
		werr <- c.CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		return fmt.Errorf("reading the echo: %v after %d bytes", err, len(got))
	}
	if err := <-werr; err != nil {
		return fmt.Errorf("writing: %v", err)
	}
	if !bytes.Equal(got, msg) {
		i := 0
		for i < min(len(got), len(msg)) && got[i] == msg[i] {
			i++
		}
		return fmt.Errorf("echo of %d bytes: got %d bytes, first difference at byte %d", n, len(got), i)
	}
	return nil
}

// TestProxyEcho: a few MiB both ways through the proxy, byte-verified,
// then the client's half-close travels to the upstream and the
// upstream's back to the client.
func TestProxyEcho(t *testing.T) {
	leaktest.Check(t)
	proxy := startProxy(t, startUpstream(t, echo))
	if err := roundTrip(dial(t, proxy), 4<<20, 1); err != nil {
		t.Fatal(err)
	}
}

// TestProxyHalfClose: the client's half-close reaches the upstream as end
// of file, and the upstream's reply, sent after that, still reaches the
// client, followed by end of file.
func TestProxyHalfClose(t *testing.T) {
	leaktest.Check(t)
	proxy := startProxy(t, startUpstream(t, func(c progressConn) {
		defer c.Close()
		n, err := io.Copy(io.Discard, c) // until the client's EOF
		if err != nil {
			return
		}
		fmt.Fprintf(c, "read %d bytes", n)
	}))
	c := dial(t, proxy)
	if _, err := c.Write(bytes.Repeat([]byte("x"), 100_000)); err != nil {
		t.Fatalf("Write = %v", err)
	}
	if err := c.CloseWrite(); err != nil {
		t.Fatalf("CloseWrite = %v", err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading the reply: %v after %q", err, got)
	}
	if want := "read 100000 bytes"; string(got) != want {
		t.Errorf("reply = %q, want %q", got, want)
	}
}

// TestProxyUpstreamUnreachable: when the upstream refuses the connection,
// the proxy closes the client's.
func TestProxyUpstreamUnreachable(t *testing.T) {
	leaktest.Check(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	c := dial(t, startProxy(t, gone))
	expectClosed(t, c)
}

// TestProxyUpstreamReset: when the upstream resets the connection, the
// proxy closes the client's.
func TestProxyUpstreamReset(t *testing.T) {
	leaktest.Check(t)
	proxy := startProxy(t, startUpstream(t, func(c progressConn) {
		c.Read(make([]byte, 1))
		c.SetLinger(0) // close sends RST
		c.Close()
	}))
	c := dial(t, proxy)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatalf("Write = %v", err)
	}
	expectClosed(t, c)
}

// expectClosed checks that the proxy closed c: a read ends with end of
// file or a reset, within the deadline dial set.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	_, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("client read = %v, want EOF or a reset: the proxy closed the connection", err)
	}
}

// TestProxyManyClients: concurrent clients, each a byte-verified round
// trip through the echo upstream with a half-close at the end.
func TestProxyManyClients(t *testing.T) {
	leaktest.Check(t)
	const clients, size = 100, 256 << 10
	proxy := startProxy(t, startUpstream(t, echo))
	var wg sync.WaitGroup
	for i := range clients {
		c := dial(t, proxy)
		wg.Go(func() {
			if err := roundTrip(c, size, uint64(i)); err != nil {
				t.Errorf("client %d: %v", i, err)
			}
		})
	}
	wg.Wait()
}
