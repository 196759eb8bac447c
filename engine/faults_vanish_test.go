package engine_test

// A peer that vanishes without FIN or RST: its socket stays open, it
// neither sends nor reads, so nothing but a timer can end the connection.
// The timers run on a manual clock.

import (
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/faulttest"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// TestVanishedPeer checks such a peer while the engine has 32 MiB queued
// for it, a send stuck in flight: IdleTimeout closes the connection with
// a timeout error matching os.ErrDeadlineExceeded, or, in "ReadDeadline",
// a read deadline with CloseOnDeadline does (OnDeadline, then OnClose,
// both with the deadline's error); either way not a moment early, the
// queue is released, and a connection with activity on the same loop
// stays open and served.
func TestVanishedPeer(t *testing.T) { backendtest.Run(t, testVanishedPeer) }

func testVanishedPeer(t *testing.T) {
	t.Run("IdleTimeout", func(t *testing.T) {
		v := etVanish(t, engine.Options{IdleTimeout: 10 * time.Second})
		etStep(v.e, v.clk, 6*time.Second)
		stresstest.EchoRound(t, v.busy, "at 6 s")
		etStep(v.e, v.clk, 4*time.Second-time.Millisecond)
		etNoEvent(t, v.h.closed, "OnClose before the idle timeout")
		etStep(v.e, v.clk, time.Millisecond) // 10 s after the last activity
		v.closed(t)
	})
	t.Run("ReadDeadline", func(t *testing.T) {
		v := etVanish(t, engine.Options{CloseOnDeadline: true})
		if err := v.c.SetReadDeadline(v.clk.Now().Add(time.Second)); err != nil {
			t.Fatalf("SetReadDeadline = %v", err)
		}
		etStep(v.e, v.clk, 999*time.Millisecond)
		etNoEvent(t, v.h.deadlines, "OnDeadline before the deadline")
		etStep(v.e, v.clk, time.Millisecond)
		if ev := etRecv(t, v.h.deadlines, "OnDeadline"); ev.c != v.c || !etIsTimeout(ev.err) {
			t.Fatalf("OnDeadline(%p, %v), want (%p, a timeout)", ev.c, ev.err, v.c)
		}
		v.closed(t)
	})
}

// etVanished is an engine on a manual clock with a busy connection and
// one to a vanished peer, c, with 32 MiB queued.
type etVanished struct {
	h    *etHandler
	e    *engine.Engine
	clk  *engine.ManualClock
	c    *engine.Conn
	busy []*faulttest.Echo
}

func etVanish(t *testing.T, o engine.Options) *etVanished {
	leaktest.Check(t) // first: its check runs after the engine stopped
	v := &etVanished{h: etEchoHandler(), clk: engine.NewManualClock(etT0)}
	o.Loops, o.WriteHighWater, o.MaxWriteBuffer = 1, 64<<20, 64<<20
	v.e = etStart(t, v.h, engine.WithClock(o, v.clk))
	a := etListen(t, v.e, "tcp")
	v.busy = stresstest.EchoClients(t, a, 1, 1)
	etOpened(t, v.h)
	etDial(t, a) // the peer that will vanish: it never reads nor sends
	v.c = etOpened(t, v.h)
	big := etPattern(32 << 20)
	if n, err := v.c.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write(32 MiB) = %d, %v", n, err)
	}
	etDo(t, v.c, func(*engine.Conn) {})
	if v.c.OutboundBuffered() == 0 {
		t.Fatalf("OutboundBuffered() = 0 with a peer that does not read")
	}
	return v
}

// closed checks that the vanished peer's connection closed with a timeout,
// its queue released, and that the busy one is still served.
func (v *etVanished) closed(t *testing.T) {
	t.Helper()
	ev := etClosed(t, v.h)
	if ev.c != v.c || !etIsTimeout(ev.err) {
		t.Fatalf("OnClose(%p, %v), want (%p, a timeout matching os.ErrDeadlineExceeded)", ev.c, ev.err, v.c)
	}
	if s := v.e.Stats(); s.Queued != 0 || s.Total().Conns != 1 {
		t.Errorf("Stats().Queued = %d, Conns = %d after the close, want 0, 1", s.Queued, s.Total().Conns)
	}
	stresstest.EchoRound(t, v.busy, "after the vanished peer's conn closed")
	etNoEvent(t, v.h.closed, "OnClose of the busy conn")
}
