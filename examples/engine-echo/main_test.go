package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/leaktest"

	"github.com/galeio/gale/engine"
)

const testTimeout = 10 * time.Second

func TestEcho(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts engine.Options
	}{
		{"Loops1", engine.Options{Loops: 1}},
		{"Loops2", engine.Options{Loops: 2}},
		{"Loops2ReusePort", engine.Options{Loops: 2, ReusePort: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t)
			e, addr := startServer(t, tc.opts)
			var wg sync.WaitGroup
			for i := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := echoClient(addr.String(), i); err != nil {
						t.Errorf("client %d: %v", i, err)
					}
				}()
			}
			wg.Wait()
			shutdown(t, e)
		})
	}
}

// TestEchoShutdownWithClients checks that Shutdown closes connections
// still open, and that their clients read end of file.
func TestEchoShutdownWithClients(t *testing.T) {
	leaktest.Check(t)
	e, addr := startServer(t, engine.Options{Loops: 2})
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testTimeout))
		// A round trip proves the engine has the connection.
		if _, err := c.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	if n := e.Conns(); n != 3 {
		t.Errorf("Conns() = %d, want 3", n)
	}
	shutdown(t, e)
	for i, c := range conns {
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("client %d: Read after Shutdown = %d, %v, want 0, EOF", i, n, err)
		}
	}
}

func TestServeBadAddress(t *testing.T) {
	leaktest.Check(t)
	if e, _, err := serve("127.0.0.1:-1", engine.Options{Loops: 1}); err == nil {
		e.Stop()
		t.Fatal(`serve("127.0.0.1:-1") = nil error, want one`)
	}
}

// echoClient sends messages of several sizes and checks their echoes. It
// writes from another goroutine while it reads, as a client must once a
// message outgrows the socket buffers: the server stops reading while
// its echo is not taken.
func echoClient(addr string, id int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(testTimeout))
	for _, size := range []int{1, 100, 64 << 10, 64<<10 + 1, 3 << 20} {
		msg := bytes.Repeat(fmt.Appendf(nil, "client %d, %d bytes;", id, size), size/16+1)[:size]
		werr := make(chan error, 1)
		go func() {
			_, err := c.Write(msg)
			werr <- err
		}()
		got := make([]byte, size)
		_, rerr := io.ReadFull(c, got)
		if err := <-werr; err != nil {
			return fmt.Errorf("write of %d bytes: %v", size, err)
		}
		if rerr != nil {
			return fmt.Errorf("reading echo of %d bytes: %v", size, rerr)
		}
		if !bytes.Equal(got, msg) {
			return fmt.Errorf("echo of %d bytes = %q..., want %q...", size, got[:min(size, 32)], msg[:min(size, 32)])
		}
	}
	return nil
}

// startServer starts the echo server on a free loopback port and stops it
// when the test ends (if the test has not shut it down).
func startServer(t *testing.T, opts engine.Options) (*engine.Engine, net.Addr) {
	t.Helper()
	e, addr, err := serve("127.0.0.1:0", opts)
	if opts.ReusePort && errors.Is(err, errors.ErrUnsupported) {
		t.Skipf("no SO_REUSEPORT here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e, addr
}

// shutdown shuts e down gracefully and checks it did so in time.
func shutdown(t *testing.T, e *engine.Engine) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown = %v, want nil", err)
	}
	if n := e.Conns(); n != 0 {
		t.Errorf("Conns() after Shutdown = %d, want 0", n)
	}
}
