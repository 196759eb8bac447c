package aio_test

import (
	"io"
	"net"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/aio"
)

// These tests drop every reference to a conn or a watcher, so they hold
// them only inside the non-inlined helpers below, and keep no result (a
// result holds its conn).

// rawAddrs are listener addresses per network for pairs the test does not
// keep (pairFunc ties both conns to t.Cleanup, which keeps them alive).
var rawAddrs = []struct {
	network string
	addr    func(t *testing.T) string
}{
	{"tcp", func(*testing.T) string { return "127.0.0.1:0" }},
	{"unix", func(t *testing.T) string { return filepath.Join(backendtest.TempDir(t), "s") }},
}

// delegateAndDrop delegates a new conn to w with one completed write and
// nothing pending, and returns only its peer.
//
//go:noinline
func delegateAndDrop(t *testing.T, w *aio.Watcher, col *collector, network, addr string) net.Conn {
	c, peer, err := rawPair(network, addr)
	if err != nil {
		t.Fatalf("pair: %v", err)
	}
	closeAtCleanup(t, peer)
	delegate(t, w, col, c, peer)
	return peer
}

// TestGCConn: a delegated conn that becomes unreachable with nothing
// pending is released; its peer sees end of file.
func TestGCConn(t *testing.T) { backendtest.Run(t, testGCConn) }

func testGCConn(t *testing.T) {
	for _, n := range rawAddrs {
		t.Run(n.network, func(t *testing.T) {
			backendtest.NeedNetwork(t, n.network)
			w := newWatcher(t, aio.Config{})
			col := collect(t, w)
			peer := delegateAndDrop(t, w, col, n.network, n.addr(t))
			waitFor(t, "the dropped conn to be found and closed", func() bool {
				runtime.GC()
				found, closed := w.GetGC()
				return found >= 1 && closed >= 1
			})
			if found, closed := w.GetGC(); found != 1 || closed != 1 {
				t.Errorf("GetGC() = %d, %d; want 1, 1", found, closed)
			}
			if got := expectEOF(t, peer); len(got) != 0 {
				t.Errorf("peer read %q, want EOF", got)
			}
			w.Poke()
			if s := w.Stats().Total(); s.Conns != 0 {
				t.Errorf("Conns = %d after GC, want 0", s.Conns)
			}
		})
	}
}

// submitAndDrop delegates a new conn to w with a read pending on it, and
// returns only its peer.
//
//go:noinline
func submitAndDrop(t *testing.T, w *aio.Watcher, network, addr string) net.Conn {
	c, peer, err := rawPair(network, addr)
	if err != nil {
		t.Fatalf("pair: %v", err)
	}
	closeAtCleanup(t, peer)
	if err := w.Read("pending", c, make([]byte, 8)); err != nil {
		t.Fatalf("Read = %v", err)
	}
	return peer
}

// TestGCConnPending: a conn with a request pending is not released,
// though the caller keeps no reference: the request does.
func TestGCConnPending(t *testing.T) { backendtest.Run(t, testGCConnPending) }

func testGCConnPending(t *testing.T) {
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)
	peer := submitAndDrop(t, w, "tcp", "127.0.0.1:0")
	for range 3 {
		runtime.GC()
	}
	w.Poke()
	if found, closed := w.GetGC(); found != 0 || closed != 0 {
		t.Errorf("GetGC() with a read pending = %d, %d; want 0, 0", found, closed)
	}
	writePeer(t, peer, "alive")
	if r := waitResult(t, col); r.Error != nil || string(r.Data) != "alive" {
		t.Errorf("pending read after GC = %v, want \"alive\"", r)
	}
}

// abandonWatcher starts a watcher with a conn and a read pending on it,
// and drops it without Close. It returns the conn's peer and a weak
// pointer to the watcher.
//
//go:noinline
func abandonWatcher(t *testing.T, cfg aio.Config) (net.Conn, weak.Pointer[aio.Watcher]) {
	w, err := aio.NewWatcherConfig(cfg)
	if err != nil {
		t.Fatalf("NewWatcherConfig = %v", err)
	}
	wp := weak.Make(w)
	t.Cleanup(func() {
		if w := wp.Value(); w != nil {
			w.Close() // the test failed: still reachable
		}
	})
	peer := submitAndDrop(t, w, "tcp", "127.0.0.1:0")
	return peer, wp
}

// TestGCWatcher: a watcher dropped without Close is closed once
// unreachable: its conns are released and its loops exit.
func TestGCWatcher(t *testing.T) { backendtest.Run(t, testGCWatcher) }

func testGCWatcher(t *testing.T) {
	g0 := runtime.NumGoroutine()
	peer, wp := abandonWatcher(t, aio.Config{Loops: 2})
	eof := make(chan error, 1)
	go func() {
		peer.SetReadDeadline(time.Now().Add(waitTimeout))
		_, err := peer.Read(make([]byte, 1))
		eof <- err
	}()
	var err error
	waitFor(t, "the dropped watcher to close its conn", func() bool {
		runtime.GC()
		select {
		case err = <-eof:
			return true
		default:
			return false
		}
	})
	if err != io.EOF {
		t.Fatalf("peer Read = %v, want io.EOF", err)
	}
	if wp.Value() != nil {
		t.Errorf("watcher still reachable after its conn was closed")
	}
	// The loops exit (Close returns only after they did, just after the
	// conn was released).
	waitFor(t, "the dropped watcher's loops to exit", func() bool {
		return runtime.NumGoroutine() <= g0
	})
}
