package main

// A hostile client that sends a line without end: bytes and never a
// newline (internal/floodtest). The server must refuse it once it passes
// -max-line, say so and close the connection, keeping its memory bounded,
// while well-behaved clients go on chatting at their pace.

import (
	"io"
	"log"
	"strconv"
	"testing"

	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/floodtest"
	"github.com/galeio/gale/internal/leaktest"
)

// floodGood is the number of well-behaved clients, floodLines the lines
// each sends per measurement.
const floodGood, floodLines = 4, 200

// TestHostileNoNewline runs floodtest against the server: a line that
// never ends (the first, the nickname) must be refused with the error
// after about -max-line bytes, with memory bounded, while well-behaved
// clients keep most of their chat throughput.
func TestHostileNoNewline(t *testing.T) { backendtest.Run(t, testHostileNoNewline) }

func testHostileNoNewline(t *testing.T) {
	leaktest.Check(t)
	cfg := testConfig(t)
	cfg.log = discardLog
	srv := newServer(cfg)
	e, addr := startServer(t, cfg)
	room := newChatters(t, addr, floodGood)
	floodtest.Run(t, floodtest.Target{
		Addr:    addr,
		BytesIn: func() uint64 { return e.Stats().Total().BytesIn },
		Cap:     cfg.maxLine,
		CapName: "-max-line",
		Refused: func(reply []byte) bool { return string(reply) == msgWelcome+string(srv.msgTooLong) },
		Want:    strconv.Quote(msgWelcome + string(srv.msgTooLong)),
		Good:    func(t *testing.T) float64 { return room.chat(t, floodLines) },
		Unit:    "lines",
		Clients: floodGood,
	})
}

var discardLog = log.New(io.Discard, "", 0)
