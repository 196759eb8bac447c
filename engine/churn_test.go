package engine_test

// Churn: short connections, one after another from several dialers,
// against one engine. Each dials, sends a message, reads its echo and
// hangs up (stresstest.Churn). Afterwards nothing may be left of them:
// no descriptor, no goroutine, no heap, no connection in the engine's
// counters.

import (
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// TestChurn runs stresstest.Churn's connect–exchange–disconnect cycles
// against one echo engine: every echo checked, and then the process's
// descriptors, goroutines and heap back to where they were before the
// cycles, within Churn's tolerances. It checks that the engine then holds
// no connection, queue, pause or timer, and that it read and wrote every
// byte of the cycles.
func TestChurn(t *testing.T) { backendtest.Run(t, testChurn) }

func testChurn(t *testing.T) {
	h := &etCountServer{}
	e := etStartCount(t, h, engine.Options{})
	a := etListen(t, e, "tcp")
	in0 := e.Stats().Total()
	r := stresstest.Churn(t, a, stresstest.ChurnConfig{
		Released: func() bool { return e.Stats().Total().Conns == 0 && h.closes.Load() == h.opens.Load() },
		Timeout:  etWait,
	})
	etCheckChurnStats(t, e, h, in0, r.Sent, r.Cycles)
}

// etCheckChurnStats checks the engine's counters after the cycles: no
// connection, queue, pause or timer left, every byte sent read and
// echoed, every connection closed by its peer.
func etCheckChurnStats(t *testing.T, e *engine.Engine, h *etCountServer, in0 engine.LoopStats, sent int64, cycles int) {
	t.Helper()
	s := e.Stats()
	tot := s.Total()
	if tot.Conns != 0 || e.Conns() != 0 || s.Queued != 0 || tot.Paused != 0 || tot.Timers != 0 {
		t.Errorf("Stats after the cycles: Conns %d, Engine.Conns %d, Queued %d, Paused %d, Timers %d; want all 0",
			tot.Conns, e.Conns(), s.Queued, tot.Paused, tot.Timers)
	}
	if in, out := tot.BytesIn-in0.BytesIn, tot.BytesOut-in0.BytesOut; in != uint64(sent) || out != uint64(sent) {
		t.Errorf("engine read %d and wrote %d bytes in %d cycles, want %d each", in, out, cycles, sent)
	}
	if p := h.badClose.Load(); p != nil {
		t.Errorf("OnClose(err = %v), want io.EOF for every connection", *p)
	}
	if o, c := h.opens.Load(), h.closes.Load(); o != c {
		t.Errorf("%d OnOpen, %d OnClose, want as many", o, c)
	}
}
