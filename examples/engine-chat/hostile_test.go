package main

// A hostile client that sends a line without end: bytes and never a
// newline (internal/testkit/floodtest). The server must refuse it once it passes
// -max-line, say so and close the connection, keeping its memory bounded,
// while well-behaved clients go on chatting at their pace
// (BenchmarkHostileNoNewline measures how fast).

import (
	"io"
	"log"
	"strconv"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/floodtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// floodGood is the number of well-behaved clients, floodLines the lines
// each sends per round.
const floodGood, floodLines = 4, 200

// TestHostileNoNewline runs floodtest against the server: a line that
// never ends (the first, the nickname) must be refused with the error
// after about -max-line bytes, with memory bounded, while well-behaved
// clients go on chatting.
func TestHostileNoNewline(t *testing.T) { backendtest.Run(t, testHostileNoNewline) }

func testHostileNoNewline(t *testing.T) {
	leaktest.Check(t)
	floodtest.Run(t, floodTarget(t))
}

// BenchmarkHostileNoNewline measures the well-behaved clients' chat
// throughput alone and beside the floods (floodtest.Bench): one op is a
// round of floodLines lines from each client.
//
//	go test -run '^$' -bench HostileNoNewline -count 6 ./examples/engine-chat/ | tee flood.txt
//	benchstat flood.txt
func BenchmarkHostileNoNewline(b *testing.B) {
	for _, state := range []string{"Alone", "Flooded"} {
		b.Run(state, func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) { floodtest.Bench(b, floodTarget(b), state == "Flooded") })
		})
	}
}

// floodTarget starts a server and floodGood chatters in it, and returns
// the server as floodtest's target.
func floodTarget(t testing.TB) floodtest.Target {
	cfg := testConfig(t)
	cfg.log = discardLog
	srv := newServer(cfg)
	e, addr := startServer(t, cfg)
	room := newChatters(t, addr, floodGood)
	return floodtest.Target{
		Addr:    addr,
		BytesIn: func() uint64 { return e.Stats().Total().BytesIn },
		Cap:     cfg.maxLine,
		CapName: "-max-line",
		Refused: func(reply []byte) bool { return string(reply) == msgWelcome+string(srv.msgTooLong) },
		Want:    strconv.Quote(msgWelcome + string(srv.msgTooLong)),
		Good:    func(t testing.TB) float64 { return room.chat(t, floodLines) },
		Unit:    "lines",
		Clients: floodGood,
	}
}

var discardLog = log.New(io.Discard, "", 0)
