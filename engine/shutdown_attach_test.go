package engine_test

// These tests reproduce a bug found while writing the examples: a
// connection that reaches its loop after Shutdown has asked that loop's
// connections to close is never asked to close, so Shutdown waits for it
// until its context ends (forever with context.Background).

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// TestShutdownClosesConnAcceptedForAnotherLoop: with two loops and no
// ReusePort, loop 0 accepts and posts each connection to its loop. One
// accepted just before the listener closed can attach on loop 1 after
// loop 1 ran Shutdown's close task; Shutdown then times out.
func TestShutdownClosesConnAcceptedForAnotherLoop(t *testing.T) {
	backendtest.Run(t, testShutdownClosesConnAcceptedForAnotherLoop)
}

func testShutdownClosesConnAcceptedForAnotherLoop(t *testing.T) {
	for iter := range 50 {
		e, err := engine.New(engine.BaseHandler{}, engine.Options{Loops: 2})
		if err != nil {
			t.Fatal(err)
		}
		addr, err := e.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		e.Start()

		// Clients connect as fast as they can while Shutdown runs.
		var (
			stop   = make(chan struct{})
			wg     sync.WaitGroup
			mu     sync.Mutex
			conns  []net.Conn
			dialed atomic.Int64
		)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := net.DialTimeout("tcp", addr.String(), time.Second)
					if err != nil {
						continue // refused once the listener is closed
					}
					dialed.Add(1)
					mu.Lock()
					conns = append(conns, c)
					mu.Unlock()
				}
			}()
		}
		for deadline := time.Now().Add(10 * time.Second); dialed.Load() < 50; {
			if time.Now().After(deadline) {
				t.Fatal("fewer than 50 connects in 10 s")
			}
			time.Sleep(time.Millisecond) // let the storm start
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err = e.Shutdown(ctx)
		cancel()
		close(stop)
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
		if err != nil {
			t.Fatalf("iteration %d: Shutdown during a storm of connects = %v, want nil", iter, err)
		}
	}
}

// adoptHandler queues a large greeting for its first connection, so that
// Shutdown waits for it to drain, and reports the others' closes.
type adoptHandler struct {
	engine.BaseHandler
	greeting []byte
	opened   chan *engine.Conn
	closed   chan *engine.Conn
	first    atomic.Bool
}

func (h *adoptHandler) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	h.opened <- c
	if h.first.CompareAndSwap(false, true) {
		return h.greeting, engine.None
	}
	return nil, engine.None
}

func (h *adoptHandler) OnClose(c *engine.Conn, _ error) { h.closed <- c }

// TestShutdownClosesConnAdoptedWhileStopping: Adopt during Shutdown
// neither fails (Listen does, with ErrEngineStopped) nor gets its
// connection closed, so Shutdown times out.
func TestShutdownClosesConnAdoptedWhileStopping(t *testing.T) {
	backendtest.Run(t, testShutdownClosesConnAdoptedWhileStopping)
}

func testShutdownClosesConnAdoptedWhileStopping(t *testing.T) {
	const big = 32 << 20 // more than loopback's socket buffers take
	h := &adoptHandler{
		greeting: make([]byte, big),
		opened:   make(chan *engine.Conn, 4),
		closed:   make(chan *engine.Conn, 4),
	}
	e, err := engine.New(h, engine.Options{Loops: 1, MaxWriteBuffer: 2 * big})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	addr, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.Start()
	recv := func(ch chan *engine.Conn, what string) *engine.Conn {
		t.Helper()
		select {
		case c := <-ch:
			return c
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s within 10 s", what)
			return nil
		}
	}

	// A: its greeting stays queued until the client reads it.
	a, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ca := recv(h.opened, "OnOpen of A")
	// OnOpen hands A over before it returns the greeting; Execute runs
	// after the attach that writes it.
	written := make(chan struct{})
	ca.Execute(func(*engine.Conn) { close(written) })
	<-written
	if ca.OutboundBuffered() == 0 {
		t.Fatal("A's greeting all written at once; want some queued")
	}
	// P: closes at once when Shutdown asks, which tells the test that
	// the loop has run Shutdown's close task.
	p, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pc := recv(h.opened, "OnOpen of P")

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		done <- e.Shutdown(ctx)
	}()
	if c := recv(h.closed, "OnClose of P"); c != pc {
		t.Fatal("OnClose of another connection than P")
	}

	// B, adopted now.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	nb, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	_, adoptErr := e.Adopt(nb)

	// A drains and closes.
	a.SetDeadline(time.Now().Add(10 * time.Second))
	if n, err := io.Copy(io.Discard, a); n != big || err != nil {
		t.Fatalf("A read %d bytes, %v, want %d, nil", n, err, big)
	}
	err = <-done
	if err != nil {
		t.Errorf("Shutdown = %v (Adopt during it = %v), want nil: the adopted connection was not closed", err, adoptErr)
	}
	if adoptErr != nil && !errors.Is(adoptErr, engine.ErrEngineStopped) {
		t.Errorf("Adopt during Shutdown = %v, want nil or ErrEngineStopped", adoptErr)
	}
}
