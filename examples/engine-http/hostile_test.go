package main

// A hostile client that sends a request line without end: bytes and never
// a newline (internal/testkit/floodtest). The server must refuse it once the head
// passes maxHead, with 431, and close the connection, keeping its memory
// bounded, while well-behaved clients go on at their pace
// (BenchmarkHostileNoNewline measures how fast).

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/floodtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// floodGood is the number of well-behaved clients, floodTrips the
// requests each makes per round.
const floodGood, floodTrips = 4, 500

// TestHostileNoNewline runs floodtest against the server: a request line
// that never ends must be refused with 431 after about maxHead bytes, with
// memory bounded, while well-behaved clients go on being served.
func TestHostileNoNewline(t *testing.T) { backendtest.Run(t, testHostileNoNewline) }

func testHostileNoNewline(t *testing.T) {
	leaktest.Check(t)
	floodtest.Run(t, floodTarget(t))
}

// BenchmarkHostileNoNewline measures the well-behaved clients'
// throughput alone and beside the floods (floodtest.Bench): one op is a
// round of floodTrips requests from each client.
//
//	go test -run '^$' -bench HostileNoNewline -count 6 ./examples/engine-http/ | tee flood.txt
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
		Cap:     maxHead,
		CapName: "maxHead",
		Refused: func(reply []byte) bool { return replyStatus(reply) == http.StatusRequestHeaderFieldsTooLarge },
		Want:    "a 431 response",
		Good:    func(t testing.TB) float64 { return requests(t, good, floodTrips) },
		Unit:    "requests",
		Clients: floodGood,
	}
}

// replyStatus returns the status of the response in b, or 0 if b is not
// one whole response that closes its connection.
func replyStatus(b []byte) int {
	r := bufio.NewReader(bytes.NewReader(b))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || !resp.Close || string(body) != http.StatusText(resp.StatusCode)+"\n" || r.Buffered() > 0 {
		return 0
	}
	return resp.StatusCode
}

// requests makes n GET requests on each client at once, reading each
// response before the next request, and returns the requests per second,
// all clients together.
func requests(t testing.TB, clients []*client, n int) float64 {
	t.Helper()
	srv := newServer()
	want := len(srv.appendHello(nil, request{http11: true, keepAlive: true}))
	start := time.Now()
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			c.conn.SetDeadline(time.Now().Add(testTimeout))
			buf := make([]byte, want)
			for k := range n {
				if _, err := io.WriteString(c.conn, get); err != nil {
					t.Errorf("client %d request %d: %v", i, k, err)
					return
				}
				if _, err := io.ReadFull(c.r, buf); err != nil || !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.HasSuffix(buf, []byte(hello)) {
					t.Errorf("client %d request %d: %q, %v", i, k, buf, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n*len(clients)) / time.Since(start).Seconds()
}
