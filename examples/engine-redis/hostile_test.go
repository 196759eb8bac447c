package main

// A hostile client that sends an inline command without end: bytes and
// never a newline (internal/testkit/floodtest). The server must refuse it once it
// passes maxInline and close the connection, keeping its memory bounded,
// while well-behaved clients go on at their pace (BenchmarkHostileNoNewline
// measures how fast).

import (
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/floodtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// floodGood is the number of well-behaved clients, floodTrips the PING
// round trips each runs per round.
const floodGood, floodTrips = 4, 1000

var tooBig = "-ERR Protocol error: too big inline request\r\n"

// TestHostileNoNewline runs floodtest against the server: an inline
// command that never ends must be refused with the protocol error after
// about maxInline bytes, with memory bounded, while well-behaved clients
// go on being served.
func TestHostileNoNewline(t *testing.T) { backendtest.Run(t, testHostileNoNewline) }

func testHostileNoNewline(t *testing.T) {
	leaktest.Check(t)
	floodtest.Run(t, floodTarget(t))
}

// BenchmarkHostileNoNewline measures the well-behaved clients'
// throughput alone and beside the floods (floodtest.Bench): one op is a
// round of floodTrips PING round trips from each client.
//
//	go test -run '^$' -bench HostileNoNewline -count 6 ./examples/engine-redis/ | tee flood.txt
//	benchstat flood.txt
func BenchmarkHostileNoNewline(b *testing.B) {
	for _, state := range []string{"Alone", "Flooded"} {
		b.Run(state, func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) { floodtest.Bench(b, floodTarget(b), state == "Flooded") })
		})
	}
}

// floodTarget starts a server and dials floodGood well-behaved clients,
// and returns the server as floodtest's target.
func floodTarget(t testing.TB) floodtest.Target {
	e, addr := startServer(t, engine.Options{Loops: 2})
	good := make([]*client, floodGood)
	for i := range good {
		good[i] = dial(t, addr)
	}
	return floodtest.Target{
		Addr:    addr,
		BytesIn: func() uint64 { return e.Stats().Total().BytesIn },
		Cap:     maxInline,
		CapName: "maxInline",
		Refused: func(reply []byte) bool { return string(reply) == tooBig },
		Want:    "the reply " + strconv.Quote(tooBig),
		Good:    func(t testing.TB) float64 { return pings(t, good, floodTrips) },
		Unit:    "PINGs",
		Clients: floodGood,
	}
}

// pings runs n PING round trips on each client at once and returns the
// round trips per second, all clients together.
func pings(t testing.TB, clients []*client, n int) float64 {
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
