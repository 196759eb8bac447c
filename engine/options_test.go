package engine_test

import (
	"bytes"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// TestNew checks New's defaults and its refusal of a nil handler.
func TestNew(t *testing.T) { backendtest.Run(t, testNew) }

func testNew(t *testing.T) {
	if e, err := engine.New(nil, engine.Options{}); err == nil {
		e.Stop()
		t.Fatal("New(nil handler) = nil error")
	}
	e := etNew(t, etNewHandler(), engine.Options{})
	if n, want := len(e.Stats().Loops), runtime.GOMAXPROCS(0); n != want {
		t.Errorf("%d loops by default, want GOMAXPROCS = %d", n, want)
	}
	e = etNew(t, etNewHandler(), engine.Options{Loops: 3})
	if n := len(e.Stats().Loops); n != 3 {
		t.Errorf("%d loops with Loops: 3", n)
	}
	if n := e.Conns(); n != 0 {
		t.Errorf("Conns() = %d on a new engine", n)
	}
}

// TestReadBufferSize checks that one OnData never gets more new bytes
// than the read buffer holds, and that the stream still arrives whole.
func TestReadBufferSize(t *testing.T) { backendtest.Run(t, testReadBufferSize) }

func testReadBufferSize(t *testing.T) {
	const size = 1000
	var maxLen atomic.Int64
	var got bytes.Buffer
	done := make(chan struct{})
	const total = 256 << 10
	h := etNewHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		if n := int64(in.Len()); n > maxLen.Load() {
			maxLen.Store(n)
		}
		got.Write(in.Bytes())
		in.Discard(in.Len())
		if got.Len() == total {
			close(done)
		}
		return engine.None
	}
	_, _, peer := etServe(t, h, engine.Options{ReadBufferSize: size}, "tcp")
	go peer.Write(etPattern(total))
	etRecv(t, done, "all bytes")
	if m := maxLen.Load(); m > size {
		t.Errorf("OnData got %d bytes at once with ReadBufferSize %d", m, size)
	}
	if i := etCheckPattern(got.Bytes()); i >= 0 {
		t.Errorf("difference at %d", i)
	}
}

// TestStats checks the per-loop counters against known traffic, and the
// timer gauge against a deadline set and cancelled.
func TestStats(t *testing.T) { backendtest.Run(t, testStats) }

func testStats(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		clk := engine.NewManualClock(etT0)
		h := etEchoHandler()
		e, c, peer := etServe(t, h, engine.WithClock(engine.Options{Loops: 1}, clk), network)
		msg := string(etPattern(1000))
		etEchoes(t, peer, msg)
		etDo(t, c, func(*engine.Conn) {}) // OnData, which counts after writing, has returned
		s := e.Stats()
		want := engine.LoopStats{Backend: s.Loops[0].Backend, Conns: 1, BytesIn: 1000, BytesOut: 1000, Accepted: 1}
		if got, env := want.Backend.String(), os.Getenv("GALE_BACKEND"); got != env {
			t.Errorf("Stats().Loops[0].Backend = %v, want %v (GALE_BACKEND)", got, env)
		}
		if s.Loops[0] != want || s.Total() != want || s.Queued != 0 {
			t.Errorf("Stats() = %+v, want one loop of %+v and nothing queued", s, want)
		}
		c.SetReadDeadline(clk.Now().Add(time.Minute))
		e.Poke()
		if n := e.Stats().Total().Timers; n != 1 {
			t.Errorf("Timers = %d with a read deadline set, want 1", n)
		}
		c.SetReadDeadline(time.Time{})
		e.Poke()
		if n := e.Stats().Total().Timers; n != 0 {
			t.Errorf("Timers = %d once it is cancelled, want 0", n)
		}
		c.Close()
		etClosed(t, h)
		if n := e.Stats().Total().Conns; n != 0 {
			t.Errorf("Conns = %d after the close, want 0", n)
		}
	})
}
