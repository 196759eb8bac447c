package engine_test

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// The package promises that every method of Engine and Conn is safe from
// any goroutine, the loop goroutines included: a callback may call them.
// These tests call the blocking ones from a callback. On a deadlock the
// loop goroutine is stuck for good, so the engine cannot be stopped: the
// test reports it and leaves the engine (TestMain then reports the leak).

// etReentry starts an engine whose OnData runs call on the loop and
// reports when call returned; it returns the peer.
func etReentry(t *testing.T, call func(e *engine.Engine, c *engine.Conn)) (*engine.Engine, <-chan struct{}) {
	t.Helper()
	returned := make(chan struct{})
	var once sync.Once
	var e *engine.Engine
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		in.Discard(in.Len())
		once.Do(func() {
			call(e, c)
			close(returned)
		})
		return engine.None
	}
	e, err := engine.New(h, engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	a, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	peer := etDial(t, a)
	peer.Write([]byte("go"))
	return e, returned
}

// etNoDeadlock waits a bounded time for the callback's call to return;
// if it did, it stops the engine.
func etNoDeadlock(t *testing.T, e *engine.Engine, returned <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-returned:
		etStop(t, e)
	case <-time.After(3 * time.Second):
		t.Errorf("%s from a callback did not return within 3s: deadlock (the engine is left stuck)", what)
	}
}

// TestStopFromCallback calls Engine.Stop from OnData.
func TestStopFromCallback(t *testing.T) { backendtest.Run(t, testStopFromCallback) }

func testStopFromCallback(t *testing.T) {
	e, returned := etReentry(t, func(e *engine.Engine, _ *engine.Conn) { e.Stop() })
	etNoDeadlock(t, e, returned, "Engine.Stop")
}

// TestDetachFromCallback calls Conn.Detach from OnData, and closes what
// it returns.
func TestDetachFromCallback(t *testing.T) { backendtest.Run(t, testDetachFromCallback) }

func testDetachFromCallback(t *testing.T) {
	e, returned := etReentry(t, func(_ *engine.Engine, c *engine.Conn) {
		if nc, err := c.Detach(); err == nil {
			nc.Close()
		}
	})
	etNoDeadlock(t, e, returned, "Conn.Detach")
}

// TestDetachAcrossLoops has two connections on different loops detach
// each other from callbacks at the same moment. Detach cannot wait for
// another loop from a loop (the two would wait for each other for ever, as
// they did): each call must return at once with ErrDetachBusy, leaving
// both connections as they were.
func TestDetachAcrossLoops(t *testing.T) { backendtest.Run(t, testDetachAcrossLoops) }

func testDetachAcrossLoops(t *testing.T) {
	h := etEchoHandler()
	e := etNew(t, h, engine.Options{Loops: 2})
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	a := etListen(t, e, "tcp")
	// Two connections served by different loops (told apart by their
	// loop goroutines).
	var conns [2]*engine.Conn
	var peers [2]net.Conn
	gids := map[int]bool{}
	for i := 0; len(gids) < 2 && i < 8; i++ {
		p := etDial(t, a)
		c := etOpened(t, h)
		var gid int
		etDo(t, c, func(*engine.Conn) { gid = etGoID() })
		if !gids[gid] {
			conns[len(gids)], peers[len(gids)] = c, p
			gids[gid] = true
		}
	}
	if len(gids) < 2 {
		t.Fatal("could not get connections on two loops")
	}
	entered := make(chan struct{}, 2)
	errs := make(chan error, 2)
	for i, c := range conns {
		other := conns[1-i]
		c.Execute(func(*engine.Conn) {
			entered <- struct{}{}
			for len(entered) < 2 && cap(entered) == 2 { // both callbacks run
				time.Sleep(time.Millisecond)
			}
			_, err := other.Detach()
			errs <- err
		})
	}
	for range 2 {
		select {
		case err := <-errs:
			if !errors.Is(err, engine.ErrDetachBusy) {
				t.Errorf("Detach of a conn on another loop, from a callback = %v, want ErrDetachBusy", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("Detach across loops did not return within 3s: deadlock (the engine is left stuck)")
		}
	}
	for _, p := range peers {
		etEchoes(t, p, "still served after the refused Detach")
	}
}
