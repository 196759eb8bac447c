package engine_test

// Slowloris: thousands of connections that each send a byte of an
// unending line now and then, holding the server's connections and
// partial input, while a few well-behaved clients run line round trips
// (stresstest.Slowloris). The test checks what the server holds and that
// the well-behaved clients are served; BenchmarkSlowloris measures their
// throughput.

import (
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// etLorisConnMem bounds the heap one slowloris connection may cost, both
// ends together (they share the process): the engine's Conn with its few
// bytes of partial line, and the client's net.Conn.
const etLorisConnMem = 8 << 10

// etLineEcho echoes every whole line; a partial line waits in the Inbound
// for its end.
func etLineEcho(c *engine.Conn, in *engine.Inbound) engine.Action {
	for {
		line, err := in.ReadUntil('\n')
		if err != nil {
			return engine.None
		}
		c.Write(line)
	}
}

// etStartLoris starts a line echo engine with h and returns it as the
// target of a slowloris run: it holds a connection as long as it is open.
func etStartLoris(t testing.TB, h *etCountServer) (*engine.Engine, stresstest.LorisTarget) {
	h.data = etLineEcho
	e := etStartCount(t, h, engine.Options{})
	return e, stresstest.LorisTarget{
		Addr:    etListen(t, e, "tcp"),
		Timeout: etWait,
		Holds:   func(n int) bool { return e.Stats().Total().Conns == n },
		BytesIn: func() uint64 { return e.Stats().Total().BytesIn },
		ConnMem: etLorisConnMem,
	}
}

// TestSlowloris serves line echo to stresstest.Slowloris's well-behaved
// clients while thousands of its connections trickle a line that never
// ends. Slowloris checks that the well-behaved clients are served
// throughout, each round within etWait; that the engine keeps every
// slowloris connection and receives every byte; and that a slowloris
// connection costs at most etLorisConnMem of heap. The test checks
// besides that nothing is queued for output while they are open, and
// that no connection is closed for another reason than its peer hanging
// up.
//
// How fast the well-behaved clients are served beside the slowloris is
// a measurement, not a behaviour: it depends on the machine's load, and
// BenchmarkSlowloris measures it. The test logs the round trips per
// second it saw.
func TestSlowloris(t *testing.T) { backendtest.Run(t, testSlowloris) }

func testSlowloris(t *testing.T) {
	h := &etCountServer{}
	e, tg := etStartLoris(t, h)
	var queued int64
	tg.Held = func(int) { queued = e.Stats().Queued }
	stresstest.Slowloris(t, tg)
	if queued != 0 {
		t.Errorf("Stats().Queued = %d with the slowloris conns open, want 0: nothing is due to them", queued)
	}
	if p := h.badClose.Load(); p != nil {
		t.Errorf("OnClose(err = %v), want io.EOF: the server must keep slow conns", *p)
	}
}

// BenchmarkSlowloris measures what TestSlowloris leaves out
// (stresstest.BenchSlowloris): the line round trips of the well-behaved
// clients, each on its own goroutine, beside the slowloris connections,
// idle (open, the trickle paused, as between their bytes) and trickling.
// One op is one round trip; the throughput kept beside the slowloris is
// Trickling's ops/s over Idle's, on the same backend:
//
//	go test -run '^$' -bench Slowloris -count 6 ./engine/ | tee loris.txt
//	benchstat loris.txt
func BenchmarkSlowloris(b *testing.B) {
	for _, state := range []string{"Idle", "Trickling"} {
		b.Run(state, func(b *testing.B) {
			backendtest.RunB(b, func(b *testing.B) {
				_, tg := etStartLoris(b, &etCountServer{})
				stresstest.BenchSlowloris(b, tg, state == "Trickling")
			})
		})
	}
}
