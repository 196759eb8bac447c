//go:build !race

package engine_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/tlstest"
)

// TestTLSEchoAllocs checks that a steady-state TLS echo round allocates
// no more on the engine than on crypto/tls over package net: only what
// crypto/tls allocates itself, one small reader per record it reads
// (readFromUntil's atLeastReader escapes), on either side. The client is
// crypto/tls over package net; testing.AllocsPerRun counts the whole
// process, so the engine's loops and record layer are included.
func TestTLSEchoAllocs(t *testing.T) { backendtest.Run(t, testTLSEchoAllocs) }

func testTLSEchoAllocs(t *testing.T) {
	h := etEchoHandler()
	_, a := etServeTLS(t, h, engine.Options{}, nil)
	std := stdTLSEcho(t)
	onStd := tlsEchoAllocs(t, std)
	if got := tlsEchoAllocs(t, a); got > onStd {
		t.Errorf("AllocsPerRun(TLS echo round of 1 KiB) = %v on the engine, %v on crypto/tls over package net; want no more", got, onStd)
	}
}

// stdTLSEcho starts a crypto/tls echo server over package net, a
// goroutine per connection, closed at cleanup.
func stdTLSEcho(t *testing.T) net.Addr {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", tlstest.Get().ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			wg.Go(func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					c.Write(buf[:n])
				}
			})
		}
	})
	return ln.Addr()
}

// tlsEchoAllocs measures the allocations of a 1 KiB echo round with the
// TLS echo server at a.
func tlsEchoAllocs(t *testing.T, a net.Addr) float64 {
	c := etDialTLS(t, a, nil)
	c.SetDeadline(time.Now().Add(time.Minute))
	msg, buf := bytes.Repeat([]byte("ping"), 256), make([]byte, 1024)
	round := func() {
		if _, err := c.Write(msg); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatalf("ReadFull = %v, want nil", err)
		}
	}
	for range 100 { // warm-up: buffers and pools reach their steady size
		round()
	}
	return testing.AllocsPerRun(1000, round)
}
