package engine_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// TestBootAndTicks checks that OnBoot runs once after Start, OnTick right
// after it and then after each returned delay, measured on the engine's
// clock, and that a delay of 0 ends the ticks.
func TestBootAndTicks(t *testing.T) { backendtest.Run(t, testBootAndTicks) }

func testBootAndTicks(t *testing.T) {
	clk := engine.NewManualClock(etT0)
	h := etNewHandler()
	var rec etRecorder
	var booted atomic.Pointer[engine.Engine]
	h.boot = func(e *engine.Engine) engine.Action {
		booted.Store(e)
		rec.add("boot")
		return engine.None
	}
	delays := []time.Duration{time.Second, 2 * time.Second, 0}
	var ticks atomic.Int32
	tickc := make(chan int, 16)
	h.tick = func() (time.Duration, engine.Action) {
		n := int(ticks.Add(1))
		rec.add("tick")
		tickc <- n
		return delays[min(n-1, len(delays)-1)], engine.None
	}
	e := etNew(t, h, engine.WithClock(engine.Options{Loops: 2}, clk))
	e.Poke()
	if got := rec.list(); len(got) != 0 {
		t.Fatalf("callbacks before Start: %q", got)
	}
	if err := e.Start(); err != nil {
		t.Fatalf("Start() = %v", err)
	}
	if n := etRecv(t, tickc, "first tick"); n != 1 {
		t.Fatalf("first tick numbered %d", n)
	}
	if got, want := rec.list(), []string{"boot", "tick"}; !slices.Equal(got, want) {
		t.Fatalf("events = %q, want %q", got, want)
	}
	if booted.Load() != e {
		t.Errorf("OnBoot got %p, want the engine %p", booted.Load(), e)
	}

	steps := []struct {
		advance time.Duration
		tick    bool
	}{
		{999 * time.Millisecond, false},
		{time.Millisecond, true}, // 1 s after the first tick; asks for 2 s
		{1999 * time.Millisecond, false},
		{time.Millisecond, true}, // returns 0: no more ticks
		{time.Hour, false},
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		e.Poke()
		select {
		case n := <-tickc:
			if !s.tick {
				t.Fatalf("step %d (+%v): tick %d, want none", i, s.advance, n)
			}
		default:
			if s.tick {
				t.Fatalf("step %d (+%v): no tick, want one", i, s.advance)
			}
		}
	}
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	if got := rec.list(); strings.Count(strings.Join(got, " "), "boot") != 1 {
		t.Errorf("events = %q, want one boot", got)
	}
	if n := h.shutdowns.Load(); n != 1 {
		t.Errorf("OnShutdown ran %d times, want 1", n)
	}
	if err := e.Stop(); !errors.Is(err, engine.ErrEngineStopped) {
		t.Errorf("second Stop() = %v, want ErrEngineStopped", err)
	}
	if n := h.shutdowns.Load(); n != 1 {
		t.Errorf("after a second Stop, OnShutdown ran %d times, want 1", n)
	}
}

// TestBootShutdown checks that OnBoot returning Shutdown stops the engine.
func TestBootShutdown(t *testing.T) { backendtest.Run(t, testBootShutdown) }

func testBootShutdown(t *testing.T) {
	h := etNewHandler()
	h.boot = func(*engine.Engine) engine.Action { return engine.Shutdown }
	e := etStart(t, h, engine.Options{Loops: 1})
	etRecv(t, e.Done(), "Done after OnBoot returned Shutdown")
	if n := h.shutdowns.Load(); n != 1 {
		t.Errorf("OnShutdown ran %d times, want 1", n)
	}
}

// TestOnOpenOut checks that OnOpen's out reaches the peer before anything
// else, even when the peer sends at once and is echoed.
func TestOnOpenOut(t *testing.T) { backendtest.Run(t, testOnOpenOut) }

func testOnOpenOut(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etEchoHandler()
		h.open = func(c *engine.Conn) ([]byte, engine.Action) {
			if c.RemoteAddr() == nil || c.LocalAddr() == nil {
				t.Errorf("OnOpen: addresses %v, %v, want both", c.LocalAddr(), c.RemoteAddr())
			}
			return []byte("hello "), engine.None
		}
		e := etStart(t, h, engine.Options{})
		peer := etDial(t, etListen(t, e, network))
		if _, err := peer.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		etExpect(t, peer, "hello ping")
	})
}

// TestOnOpenClose checks that OnOpen returning Close writes out, all of
// it even when it must be queued, then closes (OnClose with nil) without
// calling OnData.
func TestOnOpenClose(t *testing.T) { backendtest.Run(t, testOnOpenClose) }

func testOnOpenClose(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		big := etPattern(3 << 20)
		h := etNewHandler()
		h.open = func(*engine.Conn) ([]byte, engine.Action) { return big, engine.Close }
		var data atomic.Int32
		h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
			data.Add(1)
			return engine.None
		}
		_, _, peer := etServe(t, h, engine.Options{}, network)
		got := etReadAll(t, peer)
		if len(got) != len(big) || etCheckPattern(got) >= 0 {
			t.Fatalf("read %d bytes (first difference at %d), want %d bytes of out", len(got), etCheckPattern(got), len(big))
		}
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose(err = %v), want nil", ev.err)
		}
		if n := data.Load(); n != 0 {
			t.Errorf("OnData ran %d times after OnOpen returned Close", n)
		}
	})
}

// TestOnDataEcho checks that OnData sees the bytes sent, and that None
// keeps the connection open for more.
func TestOnDataEcho(t *testing.T) { backendtest.Run(t, testOnDataEcho) }

func testOnDataEcho(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etNewHandler()
		var who atomic.Pointer[engine.Conn]
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			who.Store(c)
			return etEcho(c, in)
		}
		_, c, peer := etServe(t, h, engine.Options{}, network)
		for i := range 20 {
			msg := strings.Repeat(string(rune('a'+i)), 1+i*1000)
			peer.Write([]byte(msg))
			etExpect(t, peer, msg)
		}
		if who.Load() != c {
			t.Errorf("OnData got conn %p, want the opened one %p", who.Load(), c)
		}
	})
}

// TestOnCloseReasons checks OnClose's error for each way a connection
// ends.
func TestOnCloseReasons(t *testing.T) { backendtest.Run(t, testOnCloseReasons) }

func testOnCloseReasons(t *testing.T) {
	cases := []struct {
		name  string
		close func(t *testing.T, e *engine.Engine, c *engine.Conn, peer net.Conn)
		check func(err error) bool
		want  string
	}{
		{"Close", func(t *testing.T, _ *engine.Engine, c *engine.Conn, _ net.Conn) {
			if err := c.Close(); err != nil {
				t.Fatalf("Close() = %v", err)
			}
		}, func(err error) bool { return err == nil }, "nil"},
		{"action Close", func(t *testing.T, _ *engine.Engine, _ *engine.Conn, peer net.Conn) {
			peer.Write([]byte("close"))
		}, func(err error) bool { return err == nil }, "nil"},
		{"peer close", func(t *testing.T, _ *engine.Engine, _ *engine.Conn, peer net.Conn) {
			peer.Close()
		}, func(err error) bool { return errors.Is(err, io.EOF) }, "io.EOF"},
		{"Stop", func(t *testing.T, e *engine.Engine, _ *engine.Conn, _ net.Conn) {
			if err := e.Stop(); err != nil {
				t.Fatalf("Stop() = %v", err)
			}
		}, func(err error) bool {
			return errors.Is(err, engine.ErrEngineStopped) && errors.Is(err, net.ErrClosed)
		}, "ErrEngineStopped, matching net.ErrClosed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			etForStreams(t, func(t *testing.T, network string) {
				h := etNewHandler()
				h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
					if bytes.Equal(in.Bytes(), []byte("close")) {
						c.Write([]byte("bye"))
						return engine.Close
					}
					return etEcho(c, in)
				}
				e, c, peer := etServe(t, h, engine.Options{}, network)
				tc.close(t, e, c, peer)
				ev := etClosed(t, h)
				if ev.c != c {
					t.Errorf("OnClose got conn %p, want %p", ev.c, c)
				}
				if !tc.check(ev.err) {
					t.Errorf("OnClose(err = %v), want %s", ev.err, tc.want)
				}
				if tc.name == "action Close" {
					etExpect(t, peer, "bye")
				}
				if tc.name != "peer close" {
					etExpectEOF(t, peer)
				}
				select {
				case ev := <-h.closed:
					t.Errorf("OnClose ran again, err = %v", ev.err)
				default:
				}
			})
		})
	}
}

// TestActionShutdown checks that OnData returning Shutdown shuts the
// engine down: Done closes, the peer reads what was written and then end
// of file, and OnShutdown runs once.
func TestActionShutdown(t *testing.T) { backendtest.Run(t, testActionShutdown) }

func testActionShutdown(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			c.Write([]byte("last words"))
			in.Discard(in.Len())
			return engine.Shutdown
		}
		e, _, peer := etServe(t, h, engine.Options{}, network)
		peer.Write([]byte("shut down"))
		etExpect(t, peer, "last words")
		etExpectEOF(t, peer)
		etRecv(t, e.Done(), "Done")
		if n := h.shutdowns.Load(); n != 1 {
			t.Errorf("OnShutdown ran %d times, want 1", n)
		}
		if ev := etClosed(t, h); ev.err != nil && !errors.Is(ev.err, engine.ErrEngineStopped) {
			t.Errorf("OnClose(err = %v), want nil or ErrEngineStopped", ev.err)
		}
	})
}

// TestServeFromStart checks that connections are served from Start on:
// one that arrives on a listener opened before Start, and one adopted
// before Start, get OnOpen only after OnBoot has returned. They used to
// be served from New on, before OnBoot had set up what they need.
func TestServeFromStart(t *testing.T) { backendtest.Run(t, testServeFromStart) }

func testServeFromStart(t *testing.T) {
	h := etEchoHandler()
	var rec etRecorder
	h.boot = func(*engine.Engine) engine.Action {
		rec.add("boot")
		return engine.None
	}
	h.open = func(*engine.Conn) ([]byte, engine.Action) {
		rec.add("open")
		return nil, engine.None
	}
	e := etNew(t, h, engine.Options{Loops: 2})
	a := etListen(t, e, "tcp")
	peer := etDial(t, a)
	other, err := net.Dial("tcp", a.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Adopt(other); err != nil {
		t.Fatal(err)
	}
	e.Poke()
	e.Poke()
	if got := rec.list(); len(got) != 0 {
		t.Fatalf("callbacks before Start: %q", got)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the accepted conn, the adopted one, and its peer's
		etOpened(t, h)
	}
	etWaitFor(t, "three opens recorded", func() bool { return len(rec.list()) == 4 })
	if got := rec.list(); len(got) != 4 || got[0] != "boot" {
		t.Fatalf("events = %q, want boot then three opens", got)
	}
	etEchoes(t, peer, "served after Start")
}

// TestStopBeforeStart checks that an engine stopped before Start closes
// the connections it was given and leaves nothing behind (TestMain checks
// the descriptors).
func TestStopBeforeStart(t *testing.T) { backendtest.Run(t, testStopBeforeStart) }

func testStopBeforeStart(t *testing.T) {
	h := etEchoHandler()
	e := etNew(t, h, engine.Options{Loops: 2})
	a := etListen(t, e, "tcp")
	nc, err := net.Dial("tcp", a.String())
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.Adopt(nc)
	if err != nil {
		t.Fatal(err)
	}
	etStop(t, e)
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write on a conn of an engine stopped before Start = %v, want net.ErrClosed", err)
	}
	etNoEvent(t, h.opened, "OnOpen")
}

// TestCloseBeforeStart checks that a connection adopted before Start and
// closed (or aborted, or written to) before Start too is served in
// order once the engine boots: OnOpen, the write, then the close, as if
// the engine had been running all along. The close used to run before
// the attach: OnClose came first, then OnOpen on a closed descriptor.
func TestCloseBeforeStart(t *testing.T) { backendtest.Run(t, testCloseBeforeStart) }

func testCloseBeforeStart(t *testing.T) {
	for _, how := range []string{"Close", "Abort"} {
		t.Run(how, func(t *testing.T) {
			h := etEchoHandler()
			var (
				rec     etRecorder
				adopted atomic.Pointer[engine.Conn]
			)
			h.open = func(c *engine.Conn) ([]byte, engine.Action) {
				if c == adopted.Load() {
					rec.add("open")
				}
				return nil, engine.None
			}
			h.close = func(c *engine.Conn, _ error) {
				if c == adopted.Load() {
					rec.add("close")
				}
			}
			e := etNew(t, h, engine.Options{Loops: 1})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			nc, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			peer, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			c, err := e.Adopt(nc)
			if err != nil {
				t.Fatal(err)
			}
			adopted.Store(c)
			if how == "Close" {
				c.Write([]byte("bye"))
				c.Close()
			} else {
				c.Abort()
			}
			e.Poke()
			if err := e.Start(); err != nil {
				t.Fatal(err)
			}
			etWaitFor(t, "the adopted conn's OnClose", func() bool {
				return slices.Contains(rec.list(), "close")
			})
			if got := rec.list(); !slices.Equal(got, []string{"open", "close"}) {
				t.Errorf("events = %q, want OnOpen, then OnClose", got)
			}
			peer.SetReadDeadline(time.Now().Add(etWait))
			b, err := io.ReadAll(peer)
			switch {
			case how == "Close" && (err != nil || string(b) != "bye"):
				t.Errorf("the peer read %q, %v; want \"bye\", then the end", b, err)
			case how == "Abort" && err == nil && runtime.GOOS != "windows":
				// (Under Wine an adopted socket's peer reads the end: the
				// duplicate's linger does not reach the connection.)
				t.Errorf("the peer read %q and the end; want a reset", b)
			}
		})
	}
}
