package engine_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/backendtest"
)

// etHoldHandler leaves its input unconsumed, but for the first skip bytes
// once it has them, and reports how many bytes it holds after each
// OnData.
func etHoldHandler(skip int) (*etHandler, chan int) {
	held := make(chan int, 64)
	skipped := false
	h := etNewHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		if !skipped && in.Len() >= skip {
			in.Discard(skip)
			skipped = true
		}
		held <- in.Len()
		return engine.None
	}
	return h, held
}

// etHolding waits until OnData reports holding n bytes.
func etHolding(t *testing.T, held chan int, n int) {
	t.Helper()
	for {
		if etRecv(t, held, "OnData") == n {
			return
		}
	}
}

// TestDetachInput checks that DetachInput returns the bytes OnData left
// unconsumed, in order, with the socket's own net.Conn, which reads what
// arrives afterwards.
func TestDetachInput(t *testing.T) { backendtest.Run(t, testDetachInput) }

func testDetachInput(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h, held := etHoldHandler(len("hello "))
		_, c, peer := etServe(t, h, engine.Options{}, network)
		peer.Write([]byte("hello world"))
		etHolding(t, held, len("world"))
		nc, input, err := c.DetachInput()
		if err != nil {
			t.Fatalf("DetachInput() = %v", err)
		}
		defer nc.Close()
		if string(input) != "world" {
			t.Errorf("DetachInput() input = %q, want %q (left unconsumed by OnData)", input, "world")
		}
		if _, ok := nc.(syscall.Conn); !ok {
			t.Errorf("DetachInput() net.Conn is a %T, want the socket's own (a syscall.Conn)", nc)
		}
		if ev := etClosed(t, h); ev.c != c || !errors.Is(ev.err, engine.ErrDetached) {
			t.Errorf("OnClose(%p, %v), want (%p, ErrDetached)", ev.c, ev.err, c)
		}
		peer.Write([]byte("after"))
		etExpect(t, nc, "after")
		if _, _, err := c.DetachInput(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second DetachInput() = %v, want net.ErrClosed", err)
		}
	})
}

// TestDetachReplays checks that plain Detach no longer loses the bytes
// OnData left unconsumed: the net.Conn it returns reads them first, then
// the socket's, and after Close neither.
func TestDetachReplays(t *testing.T) { backendtest.Run(t, testDetachReplays) }

func testDetachReplays(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h, held := etHoldHandler(len("hello "))
		_, c, peer := etServe(t, h, engine.Options{}, network)
		peer.Write([]byte("hello world"))
		etHolding(t, held, len("world"))
		nc, err := c.Detach()
		if err != nil {
			t.Fatalf("Detach() = %v", err)
		}
		defer nc.Close()
		peer.Write([]byte(", again"))
		etExpect(t, nc, "world, again")
		nc.Write([]byte("back"))
		etExpect(t, peer, "back")
		nc.Close()
		if n, err := nc.Read(make([]byte, 8)); n != 0 || !errors.Is(err, net.ErrClosed) {
			t.Errorf("Read after Close = %d, %v, want 0, net.ErrClosed", n, err)
		}
	})
}

// TestDetachInputFromOnData checks DetachInput called from OnData: it
// returns what the Inbound holds unconsumed at the call (bytes that live
// in the loop's read buffer, so a copy) and empties the Inbound.
func TestDetachInputFromOnData(t *testing.T) { backendtest.Run(t, testDetachInputFromOnData) }

func testDetachInputFromOnData(t *testing.T) {
	type result struct {
		nc    net.Conn
		input string
		left  int
		err   error
	}
	got := make(chan result, 1)
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if in.Len() < len("hello world") {
			return engine.None
		}
		in.Discard(len("hello "))
		nc, input, err := c.DetachInput()
		got <- result{nc, string(input), in.Len(), err}
		return engine.None
	}
	_, _, peer := etServe(t, h, engine.Options{}, "tcp")
	peer.Write([]byte("hello world"))
	r := etRecv(t, got, "DetachInput from OnData")
	if r.err != nil {
		t.Fatalf("DetachInput() from OnData = %v", r.err)
	}
	defer r.nc.Close()
	if r.input != "world" || r.left != 0 {
		t.Errorf("DetachInput() from OnData: input %q, Inbound left with %d bytes; want %q, 0", r.input, r.left, "world")
	}
	peer.Write([]byte("after"))
	etExpect(t, r.nc, "after")
}
