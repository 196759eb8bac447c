//go:build !race

package engine_test

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// TestTLSEchoAllocs checks that a steady-state TLS echo round allocates
// no more on the engine than on crypto/tls over package net: only what
// crypto/tls allocates itself, one small reader per record it reads
// (readFromUntil's atLeastReader escapes), on either side. The client is
// crypto/tls over package net; testing.AllocsPerRun counts the whole
// process, so the engine's loops and record layer are included.
func TestTLSEchoAllocs(t *testing.T) { backendtest.Run(t, testTLSEchoAllocs) }

func testTLSEchoAllocs(t *testing.T) {
	backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
	h := etEchoHandler()
	_, a := etServeTLS(t, h, engine.Options{}, nil)
	std := etGoEchoServer(t, tlstest.Get().ServerConfig()).Addr()
	onStd := tlsEchoAllocs(t, std)
	if got := tlsEchoAllocs(t, a); got > onStd {
		t.Errorf("AllocsPerRun(TLS echo round of 1 KiB) = %v on the engine, %v on crypto/tls over package net; want no more", got, onStd)
	}
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
