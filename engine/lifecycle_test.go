package engine_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// etShutdown runs e.Shutdown(ctx) in the background.
func etShutdown(ctx context.Context, e *engine.Engine) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- e.Shutdown(ctx) }()
	return ch
}

// TestShutdownDrains checks that Shutdown stops accepting, lets every
// queued byte reach a slow peer, closes the connections with nil and
// returns nil.
func TestShutdownDrains(t *testing.T) { backendtest.Run(t, testShutdownDrains) }

func testShutdownDrains(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etEchoHandler()
		e := etStart(t, h, engine.Options{})
		a := etListen(t, e, network)
		peer := etDial(t, a)
		c := etOpened(t, h)
		idle := etDial(t, a)
		etOpened(t, h)
		total := 0
		for c.OutboundBuffered() < 1<<20 {
			n, _ := c.Write(etChunk64K)
			total += n
		}
		ctx, cancel := context.WithTimeout(context.Background(), etWait)
		defer cancel()
		done := etShutdown(ctx, e)
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose(err = %v) of the idle conn, want nil", ev.err)
		}
		// The listeners' close was posted before the conns'; let every
		// loop run what was posted so far.
		e.Poke()
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v with %d bytes queued", err, c.OutboundBuffered())
		default:
		}
		etExpectEOF(t, idle)
		if nc, err := net.DialTimeout(a.Network(), a.String(), etWait); err == nil {
			nc.Close()
			t.Errorf("Dial after Shutdown began = nil error, want refused")
		}
		// Read slowly: a pause every 256 KiB.
		peer.SetReadDeadline(time.Now().Add(etWait))
		got := 0
		buf := make([]byte, 64<<10)
		for {
			n, err := peer.Read(buf)
			for _, b := range buf[:n] {
				if b != 'f' {
					t.Fatalf("byte %d is %q", got, b)
				}
			}
			if got/(256<<10) != (got+n)/(256<<10) {
				time.Sleep(time.Millisecond)
			}
			got += n
			if err != nil {
				break
			}
		}
		if got != total {
			t.Fatalf("peer read %d bytes, want %d", got, total)
		}
		if err := etRecv(t, done, "Shutdown"); err != nil {
			t.Fatalf("Shutdown = %v, want nil", err)
		}
		if ev := etClosed(t, h); ev.c != c || ev.err != nil {
			t.Errorf("OnClose(%p, %v), want (%p, nil)", ev.c, ev.err, c)
		}
		if n := h.shutdowns.Load(); n != 1 {
			t.Errorf("OnShutdown ran %d times, want 1", n)
		}
		etRecv(t, e.Done(), "Done")
	})
}

// TestShutdownDeadline checks that Shutdown whose context ends first
// returns its error, in a *ShutdownError that counts the connection whose
// output it dropped, and closes what is left with ErrEngineStopped.
func TestShutdownDeadline(t *testing.T) { backendtest.Run(t, testShutdownDeadline) }

func testShutdownDeadline(t *testing.T) {
	h := etEchoHandler()
	e, c, peer := etServe(t, h, engine.Options{}, "tcp")
	etSmallReadBuffer(peer)
	etFill(t, c, 1<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := e.Shutdown(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want context.DeadlineExceeded", err)
	}
	if se, ok := err.(*engine.ShutdownError); !ok || se.Lost != 1 {
		t.Errorf("Shutdown = %#v, want a *ShutdownError with Lost 1", err)
	}
	if d := time.Since(start); d > etWait {
		t.Errorf("Shutdown took %v with a 200ms context", d)
	}
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrEngineStopped) {
		t.Errorf("OnClose(err = %v), want ErrEngineStopped", ev.err)
	}
	etRecv(t, e.Done(), "Done")
	if err := e.Shutdown(context.Background()); !errors.Is(err, engine.ErrEngineStopped) {
		t.Errorf("second Shutdown = %v, want ErrEngineStopped", err)
	}
}

// TestStopAndAfter checks that Stop closes everything at once, even with
// output queued, and that every call afterwards fails with
// ErrEngineStopped (matching net.ErrClosed).
func TestStopAndAfter(t *testing.T) { backendtest.Run(t, testStopAndAfter) }

func testStopAndAfter(t *testing.T) {
	srv := etEchoServer(t, "tcp")
	h := etEchoHandler()
	e, c, peer := etServe(t, h, engine.Options{}, "tcp")
	etSmallReadBuffer(peer)
	etFill(t, c, 1<<20)
	if err := e.Stop(); err != nil {
		t.Fatalf("Stop() = %v", err)
	}
	select {
	case <-e.Done():
	default:
		t.Fatal("Done not closed when Stop returned")
	}
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrEngineStopped) || !errors.Is(ev.err, net.ErrClosed) {
		t.Errorf("OnClose(err = %v), want ErrEngineStopped matching net.ErrClosed", ev.err)
	}
	if n := h.shutdowns.Load(); n != 1 {
		t.Errorf("OnShutdown ran %d times, want 1", n)
	}
	if q := e.Stats().Queued; q != 0 {
		t.Errorf("Stats().Queued = %d after Stop, want 0", q)
	}
	if n := e.Conns(); n != 0 {
		t.Errorf("Conns() = %d after Stop, want 0", n)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	other := etDial(t, ln.Addr())
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	calls := []struct {
		name  string
		call  func() error
		exact bool // ErrEngineStopped itself, not only net.ErrClosed
	}{
		{"Start", e.Start, true},
		{"Stop", e.Stop, true},
		{"Shutdown", func() error { return e.Shutdown(context.Background()) }, true},
		{"Listen", func() error { _, err := e.Listen("tcp", "127.0.0.1:0"); return err }, true},
		{"Dial", func() error { _, err := e.Dial("tcp", srv.String()); return err }, true},
		{"Adopt", func() error { _, err := e.Adopt(nc); return err }, true},
		{"Conn.Write", func() error { _, err := c.Write([]byte("x")); return err }, false},
		{"Conn.Writev", func() error { _, err := c.Writev([][]byte{[]byte("x")}); return err }, false},
		{"Conn.Close", c.Close, true},
		{"Conn.CloseWrite", c.CloseWrite, true},
		{"Conn.Wake", c.Wake, true},
		{"Conn.Execute", func() error { return c.Execute(func(*engine.Conn) {}) }, true},
		{"Conn.SetDeadline", func() error { return c.SetDeadline(time.Now()) }, true},
		{"Conn.Detach", func() error { _, err := c.Detach(); return err }, true},
	}
	for _, tc := range calls {
		err := tc.call()
		if !errors.Is(err, net.ErrClosed) || (tc.exact && !errors.Is(err, engine.ErrEngineStopped)) {
			t.Errorf("%s after Stop = %v, want ErrEngineStopped (matching net.ErrClosed)", tc.name, err)
		}
	}
	_ = other
}

// TestAdoptDuringShutdown checks that once Shutdown has begun, Adopt and
// Dial fail with ErrEngineStopped, as the engine's calls after Shutdown
// promise, rather than attaching a connection that Shutdown does not close
// and then waits for until its context ends (for ever, for the Shutdown
// that the Shutdown action starts).
func TestAdoptDuringShutdown(t *testing.T) { backendtest.Run(t, testAdoptDuringShutdown) }

func testAdoptDuringShutdown(t *testing.T) {
	srv := etEchoServer(t, "tcp")
	for _, api := range []string{"Adopt", "Dial"} {
		t.Run(api, func(t *testing.T) {
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{Loops: 1})
			a := etListen(t, e, "tcp")
			busyPeer := etDial(t, a)
			busy := etOpened(t, h)
			etDial(t, a)
			idle := etOpened(t, h)
			etFill(t, busy, 1<<20) // keeps Shutdown waiting

			ctx, cancel := context.WithTimeout(context.Background(), etWait)
			defer cancel()
			done := etShutdown(ctx, e)
			if ev := etClosed(t, h); ev.c != idle {
				t.Fatalf("OnClose(%p), want the idle conn %p", ev.c, idle)
			}
			var c *engine.Conn
			var err error
			if api == "Adopt" {
				ln, lerr := net.Listen("tcp", "127.0.0.1:0")
				if lerr != nil {
					t.Fatal(lerr)
				}
				defer ln.Close()
				etDial(t, ln.Addr())
				nc, aerr := ln.Accept()
				if aerr != nil {
					t.Fatal(aerr)
				}
				defer nc.Close()
				c, err = e.Adopt(nc)
			} else {
				c, err = e.Dial("tcp", srv.String())
			}
			if !errors.Is(err, engine.ErrEngineStopped) {
				t.Errorf("%s during Shutdown = %p, %v, want nil, ErrEngineStopped", api, c, err)
			}
			if c != nil {
				c.Close() // or Shutdown waits for it
			}
			etDrain(busyPeer)
			if err := etRecv(t, done, "Shutdown"); err != nil {
				t.Errorf("Shutdown = %v, want nil", err)
			}
		})
	}
}

// TestShutdownActionBounded checks that a graceful shutdown asked for by a
// callback's Shutdown action (from OnData and OnTick; OnBoot's takes the
// same path) is bounded by Options.ShutdownTimeout: a peer that never
// reads cannot keep the engine alive for ever. It used to wait with
// context.Background().
func TestShutdownActionBounded(t *testing.T) { backendtest.Run(t, testShutdownActionBounded) }

func testShutdownActionBounded(t *testing.T) {
	for _, from := range []string{"OnData", "OnTick"} {
		t.Run(from, func(t *testing.T) {
			h := etNewHandler()
			ask := make(chan struct{})
			asked := func() bool {
				select {
				case <-ask:
					return true
				default:
					return false
				}
			}
			h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
				in.Discard(in.Len())
				if from == "OnData" && asked() {
					return engine.Shutdown
				}
				return engine.None
			}
			h.tick = func() (time.Duration, engine.Action) {
				if from == "OnTick" && asked() {
					return 0, engine.Shutdown
				}
				return time.Millisecond, engine.None
			}
			// High water marks above what is queued: the conn is still
			// read, so OnData sees "now".
			o := engine.Options{Loops: 1, ShutdownTimeout: 200 * time.Millisecond,
				WriteHighWater: 64 << 20, MaxWriteBuffer: 64 << 20}
			e, c, peer := etServe(t, h, o, "tcp")
			etSmallReadBuffer(peer)
			etFill(t, c, 1<<20) // never read: a graceful close never ends
			close(ask)
			peer.Write([]byte("now"))
			select {
			case <-e.Done():
			case <-time.After(etWait):
				t.Fatalf("the engine still runs %v after a Shutdown action with ShutdownTimeout %v", etWait, o.ShutdownTimeout)
			}
			if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrEngineStopped) {
				t.Errorf("OnClose of the stuck conn: %v, want ErrEngineStopped", ev.err)
			}
		})
	}
}

// etDrainer is an echo handler that says goodbye in OnDrain.
type etDrainer struct{ *etHandler }

func (d etDrainer) OnDrain(c *engine.Conn) { c.Write([]byte("server shutting down\n")) }

// TestShutdownGoodbye checks that a Drainer handler gets a word with each
// connection before a graceful Shutdown closes it: every peer reads the
// goodbye, then end of file, and OnClose reports nil.
func TestShutdownGoodbye(t *testing.T) { backendtest.Run(t, testShutdownGoodbye) }

func testShutdownGoodbye(t *testing.T) {
	h := etEchoHandler()
	e, err := engine.New(etDrainer{h}, engine.Options{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etStop(t, e) })
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	a := etListen(t, e, "tcp")
	var peers []net.Conn
	for range 6 {
		peers = append(peers, etDial(t, a))
		etOpened(t, h)
	}
	etEchoes(t, peers[0], "hello")
	ctx, cancel := context.WithTimeout(context.Background(), etWait)
	defer cancel()
	done := etShutdown(ctx, e)
	for i, p := range peers {
		if got := etReadAll(t, p); string(got) != "server shutting down\n" {
			t.Errorf("peer %d read %q before end of file, want the goodbye", i, got)
		}
	}
	for range peers {
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose(%v) after a graceful Shutdown, want nil", ev.err)
		}
	}
	if err := etRecv(t, done, "Shutdown"); err != nil {
		t.Errorf("Shutdown = %v, want nil", err)
	}
}
