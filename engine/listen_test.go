package engine_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/poller"
)

// etHaveIPv6 reports whether ::1 can be listened on.
func etHaveIPv6() bool {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// TestListenMany checks one engine serving several listeners at once:
// tcp, tcp4, tcp6, unix and udp.
func TestListenMany(t *testing.T) { backendtest.Run(t, testListenMany) }

func testListenMany(t *testing.T) {
	networks := []string{"tcp", "tcp4", "unix", "udp"}
	if etHaveIPv6() {
		networks = append(networks, "tcp6", "udp6")
	} else {
		t.Log("::1 unavailable: tcp6 and udp6 not tested")
	}
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 2})
	for _, network := range networks {
		a := etListen(t, e, network)
		peer := etDial(t, a)
		msg := "hello over " + network
		etEchoes(t, peer, msg)
		if network == "tcp6" {
			if ip := peer.RemoteAddr().(*net.TCPAddr).IP; ip.To4() != nil {
				t.Errorf("tcp6 listener reached at %v", ip)
			}
		}
	}
	if _, err := e.Listen("sctp", "127.0.0.1:0"); err == nil {
		t.Errorf("Listen(sctp) = nil, want an error")
	}
}

// etLoopConns returns each loop's connection count.
func etLoopConns(e *engine.Engine) []int {
	var n []int
	for _, l := range e.Stats().Loops {
		n = append(n, l.Conns)
	}
	return n
}

// etConnect dials a n times, waiting for each OnOpen, and returns the
// engine's conns.
func etConnect(t *testing.T, h *etHandler, a net.Addr, n int) []*engine.Conn {
	t.Helper()
	var cs []*engine.Conn
	for range n {
		etDial(t, a)
		cs = append(cs, etOpened(t, h))
	}
	return cs
}

// TestReusePort checks that with ReusePort each loop listens and every
// connection is served.
func TestReusePort(t *testing.T) { backendtest.Run(t, testReusePort) }

func testReusePort(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no SO_REUSEPORT")
	}
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 2, ReusePort: true})
	a := etListen(t, e, "tcp")
	var peers []net.Conn
	for range 20 {
		peers = append(peers, etDial(t, a))
	}
	for i, p := range peers {
		etEchoes(t, p, fmt.Sprint("conn ", i))
	}
	n := etLoopConns(e)
	if n[0]+n[1] != 20 || n[0] == 0 || n[1] == 0 {
		t.Errorf("conns per loop = %v, want 20 spread over both", n)
	}
	ua := etListen(t, e, "udp")
	etEchoes(t, etDial(t, ua), "udp with ReusePort")
}

// TestBalance checks the loop each accepted connection gets.
func TestBalance(t *testing.T) { backendtest.Run(t, testBalance) }

func testBalance(t *testing.T) {
	t.Run("RoundRobin", func(t *testing.T) {
		etForStreams(t, func(t *testing.T, network string) {
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{Loops: 2, Balance: engine.RoundRobin})
			etConnect(t, h, etListen(t, e, network), 20)
			if n := etLoopConns(e); n[0] != 10 || n[1] != 10 {
				t.Errorf("conns per loop = %v, want [10 10]", n)
			}
		})
	})
	t.Run("SourceHash", func(t *testing.T) {
		etForStreams(t, func(t *testing.T, network string) {
			h := etEchoHandler()
			e := etStart(t, h, engine.Options{Loops: 2, Balance: engine.SourceHash})
			etConnect(t, h, etListen(t, e, network), 20)
			if n := etLoopConns(e); n[0] != 20 && n[1] != 20 {
				t.Errorf("conns per loop = %v, want all 20 from one source on one loop", n)
			}
		})
	})
	t.Run("LeastConns", func(t *testing.T) {
		h := etEchoHandler()
		e := etStart(t, h, engine.Options{Loops: 2, Balance: engine.LeastConns})
		a := etListen(t, e, "tcp")
		cs := etConnect(t, h, a, 6)
		if n := etLoopConns(e); n[0] != 3 || n[1] != 3 {
			t.Fatalf("conns per loop = %v, want [3 3]", n)
		}
		// Each conn went to the loop with fewer, loop 0 on a tie: the odd
		// ones are on loop 1. Close two of them.
		for _, c := range []*engine.Conn{cs[1], cs[3]} {
			c.Close()
			if ev := etClosed(t, h); ev.c != c {
				t.Fatalf("OnClose(%p), want %p", ev.c, c)
			}
		}
		if n := etLoopConns(e); n[0] != 3 || n[1] != 1 {
			t.Fatalf("conns per loop = %v, want [3 1]", n)
		}
		etConnect(t, h, a, 2)
		if n := etLoopConns(e); n[0] != 3 || n[1] != 3 {
			t.Fatalf("conns per loop = %v after 2 more, want [3 3]", n)
		}
	})
}

// etAcceptCounter counts the accepts a backend completed.
type etAcceptCounter struct {
	poller.Backend
	n *atomic.Int64
}

func (b etAcceptCounter) Wait(timeout time.Duration, fn func(*poller.Completion)) error {
	return b.Backend.Wait(timeout, func(p *poller.Completion) {
		fn(p)
		if p.Op == poller.OpAccept && p.Err == 0 {
			b.n.Add(1)
		}
	})
}

// TestBalanceLeastConnsBusyLoop checks LeastConns on a burst of
// connections while the other loop is busy: the acceptor must count the
// connections it has handed to a loop that has not taken them yet, or it
// gives them all to that loop.
func TestBalanceLeastConnsBusyLoop(t *testing.T) { backendtest.Run(t, testBalanceLeastConnsBusyLoop) }

func testBalanceLeastConnsBusyLoop(t *testing.T) {
	var accepted atomic.Int64
	h := etEchoHandler()
	o := engine.WithBackend(engine.Options{Loops: 2, Balance: engine.LeastConns}, func(b poller.Backend) poller.Backend {
		return etAcceptCounter{b, &accepted}
	})
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	cs := etConnect(t, h, a, 2)
	if n := etLoopConns(e); n[0] != 1 || n[1] != 1 {
		t.Fatalf("conns per loop = %v, want [1 1]", n)
	}
	busy := cs[1]
	etDo(t, busy, func(*engine.Conn) {})
	if etLoopConns(e)[1] != 1 {
		busy = cs[0]
	}
	// Keep loop 1 busy in a callback while 4 connections arrive.
	entered, release := make(chan struct{}), make(chan struct{})
	busy.Execute(func(*engine.Conn) {
		close(entered)
		<-release
	})
	etRecv(t, entered, "the busy function")
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	for range 4 {
		etDial(t, a)
	}
	etWaitFor(t, "6 accepts", func() bool { return accepted.Load() == 6 })
	close(release)
	released = true
	for range 4 {
		etOpened(t, h)
	}
	if n := etLoopConns(e); n[0] != 3 || n[1] != 3 {
		t.Errorf("conns per loop = %v after a burst of 4 while loop 1 was busy, want [3 3]", n)
	}
}

// TestListenAfterStop checks that Stop removes a unix listener's socket
// file and that Listen fails once the engine stopped.
func TestListenAfterStop(t *testing.T) { backendtest.Run(t, testListenAfterStop) }

func testListenAfterStop(t *testing.T) {
	e := etStart(t, etNewHandler(), engine.Options{Loops: 1})
	ua := etListen(t, e, "unix")
	if _, err := os.Stat(ua.String()); err != nil {
		t.Fatalf("unix listener's file: %v", err)
	}
	e.Stop()
	if _, err := os.Stat(ua.String()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unix listener's file after Stop: %v, want it removed", err)
	}
	for _, network := range []string{"tcp", "unix", "udp"} {
		if _, err := e.Listen(network, etAddr(t, network)); !errors.Is(err, engine.ErrEngineStopped) {
			t.Errorf("Listen(%s) after Stop = %v, want ErrEngineStopped", network, err)
		}
	}
}
