package engine_test

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// etClocked starts an engine on a manual clock, with one connection.
func etClocked(t *testing.T, h *etHandler, o engine.Options, network string) (*engine.Engine, *engine.ManualClock, *engine.Conn, net.Conn) {
	t.Helper()
	clk := engine.NewManualClock(etT0)
	e, c, peer := etServe(t, h, engine.WithClock(o, clk), network)
	return e, clk, c, peer
}

// etStep advances clk by d and lets e's loops see it.
func etStep(e *engine.Engine, clk *engine.ManualClock, d time.Duration) {
	clk.Advance(d)
	e.Poke()
}

// etEchoes checks that c still echoes.
func etEchoes(t *testing.T, peer net.Conn, msg string) {
	t.Helper()
	if _, err := peer.Write([]byte(msg)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	etExpect(t, peer, msg)
}

// TestReadDeadline checks that a read deadline calls OnDeadline once, at
// its time on the engine's clock, with a timeout error, and leaves the
// connection open when the handler returns None.
func TestReadDeadline(t *testing.T) { backendtest.Run(t, testReadDeadline) }

func testReadDeadline(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etEchoHandler()
		e, clk, c, peer := etClocked(t, h, engine.Options{}, network)
		if err := c.SetReadDeadline(clk.Now().Add(time.Second)); err != nil {
			t.Fatalf("SetReadDeadline = %v", err)
		}
		etStep(e, clk, 999*time.Millisecond)
		etNoEvent(t, h.deadlines, "OnDeadline before the deadline")
		etStep(e, clk, time.Millisecond)
		ev := etRecv(t, h.deadlines, "OnDeadline")
		if ev.c != c || !etIsTimeout(ev.err) {
			t.Fatalf("OnDeadline(%p, %v), want (%p, a timeout matching os.ErrDeadlineExceeded)", ev.c, ev.err, c)
		}
		etStep(e, clk, time.Hour)
		etNoEvent(t, h.deadlines, "second OnDeadline")
		etNoEvent(t, h.closed, "OnClose")
		etEchoes(t, peer, "still open")
	})
}

// TestDeadlineCancel checks that a zero time cancels a deadline, and that
// setting one again replaces the earlier one.
func TestDeadlineCancel(t *testing.T) { backendtest.Run(t, testDeadlineCancel) }

func testDeadlineCancel(t *testing.T) {
	h := etEchoHandler()
	e, clk, c, _ := etClocked(t, h, engine.Options{}, "tcp")
	c.SetReadDeadline(clk.Now().Add(time.Second))
	if !engine.HasTimers(c) {
		t.Fatal("no timers with a read deadline set")
	}
	c.SetReadDeadline(time.Time{})
	etStep(e, clk, time.Hour)
	etNoEvent(t, h.deadlines, "OnDeadline after cancelling")
	if engine.HasTimers(c) {
		t.Error("timers kept with no deadline set (an idle connection would carry them)")
	}

	c.SetReadDeadline(clk.Now().Add(time.Second))
	c.SetReadDeadline(clk.Now().Add(3 * time.Second))
	etStep(e, clk, 2*time.Second)
	etNoEvent(t, h.deadlines, "OnDeadline of a replaced deadline")
	etStep(e, clk, time.Second)
	etRecv(t, h.deadlines, "OnDeadline")
}

// TestDeadlineClose checks both ways a deadline closes a connection: the
// handler returning Close (OnClose with nil) and Options.CloseOnDeadline
// (OnClose with the deadline error, whatever the handler returns).
func TestDeadlineClose(t *testing.T) { backendtest.Run(t, testDeadlineClose) }

func testDeadlineClose(t *testing.T) {
	cases := []struct {
		name     string
		opts     engine.Options
		action   engine.Action
		wantTime bool // OnClose gets the timeout error
	}{
		{"action Close", engine.Options{}, engine.Close, false},
		{"CloseOnDeadline", engine.Options{CloseOnDeadline: true}, engine.None, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			etForStreams(t, func(t *testing.T, network string) {
				h := etEchoHandler()
				h.deadline = func(*engine.Conn, error) engine.Action { return tc.action }
				e, clk, c, peer := etClocked(t, h, tc.opts, network)
				c.SetDeadline(clk.Now().Add(time.Second))
				etStep(e, clk, time.Second)
				etRecv(t, h.deadlines, "OnDeadline")
				ev := etClosed(t, h)
				if tc.wantTime && !etIsTimeout(ev.err) {
					t.Errorf("OnClose(err = %v), want the deadline error", ev.err)
				}
				if !tc.wantTime && ev.err != nil {
					t.Errorf("OnClose(err = %v), want nil", ev.err)
				}
				etExpectEOF(t, peer)
			})
		})
	}
}

// TestWriteDeadline checks that a write deadline fires only if output is
// still queued when it passes.
func TestWriteDeadline(t *testing.T) { backendtest.Run(t, testWriteDeadline) }

func testWriteDeadline(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etEchoHandler()
		o := engine.Options{WriteHighWater: 64 << 20, MaxWriteBuffer: 64 << 20}
		e, clk, c, peer := etClocked(t, h, o, network)

		// Nothing queued: no OnDeadline.
		c.SetWriteDeadline(clk.Now().Add(time.Second))
		etStep(e, clk, 2*time.Second)
		etNoEvent(t, h.deadlines, "OnDeadline with nothing queued")
		c.SetWriteDeadline(time.Time{}) // passed: Writes would fail

		// 32 MiB to a peer that does not read: most stays queued.
		big := etPattern(32 << 20)
		if n, err := c.Write(big); n != len(big) || err != nil {
			t.Fatalf("Write(32 MiB) = %d, %v", n, err)
		}
		if c.OutboundBuffered() == 0 {
			t.Fatalf("OutboundBuffered() = 0 with a peer that does not read")
		}
		c.SetWriteDeadline(clk.Now().Add(time.Second))
		etStep(e, clk, 999*time.Millisecond)
		etNoEvent(t, h.deadlines, "OnDeadline before the deadline")
		etStep(e, clk, time.Millisecond)
		ev := etRecv(t, h.deadlines, "OnDeadline")
		if !etIsTimeout(ev.err) {
			t.Fatalf("OnDeadline(err = %v), want a timeout", ev.err)
		}
		// Still open: the peer reads everything.
		got := etReadFull(t, peer, len(big))
		if i := etCheckPattern(got); i >= 0 {
			t.Fatalf("peer read a difference at %d", i)
		}
		etNoEvent(t, h.closed, "OnClose")
	})
}

// TestIdleTimeout checks that IdleTimeout closes a connection without
// activity, with a timeout error, and not one that reads and writes.
func TestIdleTimeout(t *testing.T) { backendtest.Run(t, testIdleTimeout) }

func testIdleTimeout(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		clk := engine.NewManualClock(etT0)
		h := etEchoHandler()
		e := etStart(t, h, engine.WithClock(engine.Options{IdleTimeout: 10 * time.Second}, clk))
		a := etListen(t, e, network)
		idlePeer := etDial(t, a)
		idle := etOpened(t, h)
		busyPeer := etDial(t, a)
		busy := etOpened(t, h)

		// The echo's send completes, and counts as activity, when the loop
		// sees its completion: wait for that before the clock moves on.
		sent := func() bool { return busy.OutboundBuffered() == 0 }
		etStep(e, clk, 6*time.Second)
		etEchoes(t, busyPeer, "activity at 6 s")
		etWaitFor(t, "the echo sent", sent)
		etStep(e, clk, 5*time.Second) // 11 s: idle is past its timeout
		ev := etClosed(t, h)
		if ev.c != idle || !etIsTimeout(ev.err) {
			t.Fatalf("OnClose(%p, %v), want (%p, a timeout)", ev.c, ev.err, idle)
		}
		etExpectEOF(t, idlePeer)
		etEchoes(t, busyPeer, "still open at 11 s")
		etWaitFor(t, "the echo sent", sent)
		etStep(e, clk, 9*time.Second) // 20 s: 9 s after the last activity
		etNoEvent(t, h.closed, "OnClose of the busy conn")
		etStep(e, clk, 2*time.Second) // 22 s: 11 s after
		ev = etClosed(t, h)
		if ev.c != busy || !etIsTimeout(ev.err) {
			t.Fatalf("OnClose(%p, %v), want (%p, a timeout)", ev.c, ev.err, busy)
		}
	})
}

// TestIdleGoodbye checks that an idle timeout calls OnDeadline, with
// ErrIdleTimeout, before it closes the connection, so that the server can
// say goodbye: what OnDeadline writes reaches the peer before end of file,
// and OnClose reports the idle timeout. The connection used to close
// without a word.
func TestIdleGoodbye(t *testing.T) { backendtest.Run(t, testIdleGoodbye) }

func testIdleGoodbye(t *testing.T) {
	h := etEchoHandler()
	h.deadline = func(c *engine.Conn, err error) engine.Action {
		if errors.Is(err, engine.ErrIdleTimeout) {
			c.Write([]byte("idle: bye\n"))
		}
		return engine.None
	}
	e, clk, c, peer := etClocked(t, h, engine.Options{IdleTimeout: 10 * time.Second}, "tcp")
	etStep(e, clk, 10*time.Second)
	if ev := etRecv(t, h.deadlines, "OnDeadline"); ev.c != c || !errors.Is(ev.err, engine.ErrIdleTimeout) || !etIsTimeout(ev.err) {
		t.Fatalf("OnDeadline(%p, %v), want (%p, ErrIdleTimeout)", ev.c, ev.err, c)
	}
	if got := etReadAll(t, peer); string(got) != "idle: bye\n" {
		t.Errorf("the peer read %q before end of file, want the goodbye", got)
	}
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrIdleTimeout) {
		t.Errorf("OnClose(%v), want ErrIdleTimeout", ev.err)
	}
}

// TestReadIdleTimeout checks Options.ReadIdleTimeout: a connection that
// sends nothing for that long is closed even though the server keeps
// writing to it (a client that only receives broadcasts), and one that
// sends is not. IdleTimeout counts the server's own writes as activity,
// so such a client was never idle.
func TestReadIdleTimeout(t *testing.T) { backendtest.Run(t, testReadIdleTimeout) }

func testReadIdleTimeout(t *testing.T) {
	clk := engine.NewManualClock(etT0)
	h := etEchoHandler()
	e := etStart(t, h, engine.WithClock(engine.Options{ReadIdleTimeout: 10 * time.Second, IdleTimeout: time.Hour}, clk))
	a := etListen(t, e, "tcp")
	listener := etDial(t, a)
	mute := etOpened(t, h)
	talker := etDial(t, a)
	etOpened(t, h)
	drained := etDrain(listener)
	for range 10 { // a broadcast every second; only the talker speaks
		mute.Write([]byte("news\n"))
		etEchoes(t, talker, "hello")
		etStep(e, clk, time.Second)
	}
	ev := etClosed(t, h)
	if ev.c != mute || !errors.Is(ev.err, engine.ErrIdleTimeout) {
		t.Fatalf("OnClose(%p, %v), want the listening conn %p with ErrIdleTimeout", ev.c, ev.err, mute)
	}
	if got := <-drained; string(got) != strings.Repeat("news\n", 10) {
		t.Errorf("the listener read %q, want every broadcast", got)
	}
	etEchoes(t, talker, "still served")
}

// TestReadDeadlineMet checks that a read deadline bounds the wait for
// data, as a blocked Read's does: bytes arriving before it meet it, and
// no OnDeadline follows. It used to be a plain timer that fired at its
// time even when data had arrived.
func TestReadDeadlineMet(t *testing.T) { backendtest.Run(t, testReadDeadlineMet) }

func testReadDeadlineMet(t *testing.T) {
	h := etEchoHandler()
	e, clk, c, peer := etClocked(t, h, engine.Options{}, "tcp")
	c.SetReadDeadline(clk.Now().Add(time.Second))
	etDo(t, c, func(*engine.Conn) {}) // set before the bytes come
	etStep(e, clk, 500*time.Millisecond)
	etEchoes(t, peer, "in time")
	etStep(e, clk, time.Second)
	etNoEvent(t, h.deadlines, "OnDeadline of a read deadline met by arriving data")

	// Set again, with nothing arriving: it passes.
	c.SetReadDeadline(clk.Now().Add(time.Second))
	etStep(e, clk, time.Second)
	if ev := etRecv(t, h.deadlines, "OnDeadline"); !errors.Is(ev.err, engine.ErrReadDeadline) || !etIsTimeout(ev.err) {
		t.Errorf("OnDeadline(%v), want ErrReadDeadline", ev.err)
	}
}

// TestWriteAfterWriteDeadline checks that a write deadline bounds writes
// made after it passed, as a net.Conn's does: they fail with
// ErrWriteDeadline and write nothing, until the deadline is moved. They
// used to go through: the deadline was looked at only once, at its time.
func TestWriteAfterWriteDeadline(t *testing.T) { backendtest.Run(t, testWriteAfterWriteDeadline) }

func testWriteAfterWriteDeadline(t *testing.T) {
	h := etEchoHandler()
	e, clk, c, peer := etClocked(t, h, engine.Options{}, "tcp")
	c.SetWriteDeadline(clk.Now().Add(time.Second))
	etStep(e, clk, 2*time.Second)
	etNoEvent(t, h.deadlines, "OnDeadline with nothing queued")
	if n, err := c.Write([]byte("late")); n != 0 || !errors.Is(err, engine.ErrWriteDeadline) || !etIsTimeout(err) {
		t.Errorf("Write after the write deadline = %d, %v; want 0, ErrWriteDeadline", n, err)
	}
	c.SetWriteDeadline(time.Time{})
	if _, err := c.Write([]byte("ok")); err != nil {
		t.Fatalf("Write after the deadline was cleared = %v", err)
	}
	etExpect(t, peer, "ok")
}

// TestReadDeadlinePartial checks that a read deadline bounds the wait for
// what the handler waits for, not for any byte: a partial line, which the
// handler leaves unconsumed, keeps the deadline armed, and it passes. A
// whole line, consumed, meets it. (A line's first bytes used to meet it,
// so a client that sent half a line and stopped escaped the deadline.)
func TestReadDeadlinePartial(t *testing.T) { backendtest.Run(t, testReadDeadlinePartial) }

func testReadDeadlinePartial(t *testing.T) {
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		for {
			line, err := in.ReadUntil('\n')
			if err != nil {
				return engine.None // wait for the rest of the line
			}
			c.Write(line)
		}
	}
	e, clk, c, peer := etClocked(t, h, engine.Options{}, "tcp")
	c.SetReadDeadline(clk.Now().Add(time.Second))
	etDo(t, c, func(*engine.Conn) {})
	peer.Write([]byte("whole line\n"))
	etExpect(t, peer, "whole line\n")
	etStep(e, clk, 2*time.Second)
	etNoEvent(t, h.deadlines, "OnDeadline after a whole line arrived in time")

	c.SetReadDeadline(clk.Now().Add(time.Second))
	etDo(t, c, func(*engine.Conn) {}) // the deadline is set before the bytes come
	peer.Write([]byte("half a li"))
	etWaitFor(t, "the half line received", func() bool { return e.Stats().Total().BytesIn >= uint64(len("whole line\nhalf a li")) })
	etStep(e, clk, time.Second)
	if ev := etRecv(t, h.deadlines, "OnDeadline"); !errors.Is(ev.err, engine.ErrReadDeadline) {
		t.Errorf("OnDeadline(%v), want ErrReadDeadline", ev.err)
	}
}
