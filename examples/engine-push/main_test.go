package main

import (
	"bufio"
	"context"
	"fmt"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
)

const testTimeout = 10 * time.Second

type client struct {
	conn net.Conn
	r    *bufio.Reader
}

func dial(t *testing.T, addr net.Addr) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return &client{conn: c, r: bufio.NewReader(c)}
}

// readTick reads one pushed line and returns its number and the line.
func (c *client) readTick() (uint64, string, error) {
	line, err := c.r.ReadString('\n')
	if err != nil {
		return 0, line, err
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "tick" {
		return 0, line, fmt.Errorf("line %q, want \"tick N TIME\\n\"", line)
	}
	n, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, line, fmt.Errorf("line %q: %v", line, err)
	}
	if _, err := time.Parse(time.RFC3339Nano, f[2]); err != nil {
		return 0, line, fmt.Errorf("line %q: %v", line, err)
	}
	return n, line, nil
}

func TestPush(t *testing.T) {
	leaktest.Check(t)
	p := newPusher(5 * time.Millisecond)
	e, addr := startServer(t, p, engine.Options{Loops: 2})

	clients := make([]*client, 4)
	for i := range clients {
		clients[i] = dial(t, addr)
	}

	// Every client gets consecutive ticks from the one it joined at, and
	// all get the same line for the same tick.
	var mu sync.Mutex
	seen := map[uint64]string{}
	readAll := func(cs []*client, lines int) {
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var last uint64
				for j := range lines {
					n, line, err := c.readTick()
					if err != nil {
						t.Errorf("client %d, line %d: %v", i, j, err)
						return
					}
					if j > 0 && n != last+1 {
						t.Errorf("client %d: tick %d after %d, want %d", i, n, last, last+1)
					}
					last = n
					mu.Lock()
					if other, ok := seen[n]; ok && other != line {
						t.Errorf("client %d: tick %d is %q, another client got %q", i, n, line, other)
					}
					seen[n] = line
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	readAll(clients, 5)
	if n := p.count(); n != 4 {
		t.Errorf("count() = %d, want 4", n)
	}

	// Clients that hang up leave the set; the others keep receiving.
	clients[0].conn.Close()
	clients[1].conn.Close()
	waitFor(t, "count() == 2", func() bool { return p.count() == 2 })
	readAll(clients[2:], 3)

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown = %v, want nil", err)
	}
	if n := p.count(); n != 0 {
		t.Errorf("count() after Shutdown = %d, want 0", n)
	}
	// After Shutdown the remaining clients read whole lines, then EOF.
	for i, c := range clients[2:] {
		for {
			_, line, err := c.readTick()
			if err == io.EOF && line == "" {
				break
			}
			if err != nil {
				t.Errorf("client %d after Shutdown: %v (line %q), want whole lines then EOF", i+2, err, line)
				break
			}
		}
	}
}

// TestPushConcurrentChurn opens and closes clients on both loops while
// ticks are written, for the race detector.
func TestPushConcurrentChurn(t *testing.T) {
	leaktest.Check(t)
	p := newPusher(time.Millisecond)
	e, addr := startServer(t, p, engine.Options{Loops: 2})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				c, err := net.Dial("tcp", addr.String())
				if err != nil {
					t.Errorf("goroutine %d: %v", i, err)
					return
				}
				c.SetDeadline(time.Now().Add(testTimeout))
				cl := &client{conn: c, r: bufio.NewReader(c)}
				if _, _, err := cl.readTick(); err != nil {
					t.Errorf("goroutine %d: %v", i, err)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	waitFor(t, "count() == 0", func() bool { return p.count() == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown = %v, want nil", err)
	}
}

// waitFor polls cond until it holds, for at most testTimeout: a client's
// close reaches the server at a time the test cannot observe otherwise.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s still false after %v", what, testTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// startServer starts p on a free loopback port and stops it when the test
// ends (if the test has not shut it down).
func startServer(t *testing.T, p *pusher, opts engine.Options) (*engine.Engine, net.Addr) {
	t.Helper()
	e, addr, err := serve("127.0.0.1:0", p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e, addr
}
