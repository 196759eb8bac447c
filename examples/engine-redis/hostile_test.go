package main

// A hostile client that sends an inline command without end: bytes and
// never a newline (internal/floodtest). The server must refuse it once it
// passes maxInline and close the connection, keeping its memory bounded,
// while well-behaved clients go on at their pace.

import (
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/floodtest"
	"github.com/galeio/gale/internal/leaktest"
)

// floodGood is the number of well-behaved clients, floodTrips the PING
// round trips each runs per measurement.
const floodGood, floodTrips = 4, 1000

var tooBig = "-ERR Protocol error: too big inline request\r\n"

// TestHostileNoNewline runs floodtest against the server: an inline
// command that never ends must be refused with the protocol error after
// about maxInline bytes, with memory bounded, while well-behaved clients
// keep most of their PING throughput.
func TestHostileNoNewline(t *testing.T) { backendtest.Run(t, testHostileNoNewline) }

func testHostileNoNewline(t *testing.T) {
	leaktest.Check(t)
	e, addr := startServer(t, engine.Options{Loops: 2})
	good := make([]*client, floodGood)
	for i := range good {
		good[i] = dial(t, addr)
	}
	floodtest.Run(t, floodtest.Target{
		Addr:    addr,
		BytesIn: func() uint64 { return e.Stats().Total().BytesIn },
		Cap:     maxInline,
		CapName: "maxInline",
		Refused: func(reply []byte) bool { return string(reply) == tooBig },
		Want:    "the reply " + strconv.Quote(tooBig),
		Good:    func(t *testing.T) float64 { return pings(t, good, floodTrips) },
		Unit:    "PINGs",
		Clients: floodGood,
	})
}

// pings runs n PING round trips on each client at once and returns the
// round trips per second, all clients together.
func pings(t *testing.T, clients []*client, n int) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			c.conn.SetDeadline(time.Now().Add(testTimeout))
			buf := make([]byte, len("+PONG\r\n"))
			for k := range n {
				if _, err := c.conn.Write([]byte("PING\r\n")); err != nil {
					t.Errorf("client %d PING %d: %v", i, k, err)
					return
				}
				if _, err := io.ReadFull(c.r, buf); err != nil || string(buf) != "+PONG\r\n" {
					t.Errorf("client %d PING %d: %q, %v", i, k, buf, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n*len(clients)) / time.Since(start).Seconds()
}
