//go:build unix

package aio_test

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// regGates holds each registration at two points, right after its dup and
// right after it entered its duplicate (before it closes the caller's
// conn), until the test opens that registration's gate.
type regGates struct {
	dup, enter chan chan struct{} // one gate per registration reaching the point
	done       chan struct{}      // closed at cleanup: every gate opens
	wg         sync.WaitGroup     // the test's goroutines that may wait on a gate
}

// gateRegistrations installs regGates for the rest of the test. Call it
// after collect, so that its cleanup runs before the watcher closes.
func gateRegistrations(t testing.TB) *regGates {
	g := &regGates{
		dup:   make(chan chan struct{}, 8),
		enter: make(chan chan struct{}, 8),
		done:  make(chan struct{}),
	}
	hold := func(at chan chan struct{}) func() {
		return func() {
			gate := make(chan struct{})
			at <- gate
			select {
			case <-gate:
			case <-g.done:
			}
		}
	}
	restoreDup, restoreEnter := aio.SetAfterDup(hold(g.dup)), aio.SetAfterEnter(hold(g.enter))
	t.Cleanup(func() {
		close(g.done)
		restoreDup()
		restoreEnter()
		g.wg.Wait()
	})
	return g
}

// goDo runs f on a goroutine joined at cleanup.
func (g *regGates) goDo(f func()) { g.wg.Go(f) }

// next returns the gate of the next registration to reach at, failing the
// test after d.
func (g *regGates) next(t testing.TB, at chan chan struct{}, d time.Duration, what string) chan struct{} {
	t.Helper()
	return recvWithin(t, at, d, what+": no registration got there")
}

// TestFreeBetweenRegistrations: two requests delegate one conn at once;
// the first enters its duplicate, and Free takes it before the first
// closes the caller's conn. The second, whose dup came before all that,
// must not delegate the conn again after the Free: it fails with an error
// matching net.ErrClosed, and the peer reads end of file.
func TestFreeBetweenRegistrations(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		testTakeBetweenRegistrations(t, func(w *aio.Watcher, c net.Conn) {
			if err := w.Free(c); err != nil {
				t.Fatalf("Free = %v, want nil", err)
			}
		})
	})
}

// TestDetachBetweenRegistrations: as TestFreeBetweenRegistrations, with
// Detach; once the detached conn is closed, the peer reads end of file.
func TestDetachBetweenRegistrations(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		testTakeBetweenRegistrations(t, func(w *aio.Watcher, c net.Conn) {
			nc, err := w.Detach(c)
			if err != nil {
				t.Fatalf("Detach = %v, want nil", err)
			}
			defer nc.Close()
			if nc == c {
				t.Errorf("Detach returned the delegated conn itself, want a new one")
			}
		})
	})
}

// testTakeBetweenRegistrations runs take (a Free or a Detach that closes
// what it returns) between the first registration's entry and its close of
// the caller's conn, with a second registration held after its dup.
func testTakeBetweenRegistrations(t *testing.T, take func(*aio.Watcher, net.Conn)) {
	c, peer := tcpPair(t)
	ino := sockInode(t, c)
	w := newWatcher(t, aio.Config{})
	col := collect(t, w)

	g := gateRegistrations(t)
	submitted := make(chan error, 2)
	g.goDo(func() { submitted <- w.Read("read", c, make([]byte, 8)) })
	first := g.next(t, g.dup, waitTimeout, "Read's dup")
	g.goDo(func() { submitted <- w.Write("write", c, []byte("x")) })
	second := g.next(t, g.dup, waitTimeout, "Write's dup")
	close(first)
	firstEntered := g.next(t, g.enter, waitTimeout, "Read's entry")
	take(w, c)
	close(second)
	select {
	case gate := <-g.enter:
		t.Errorf("the Write's registration entered its duplicate after the conn was taken")
		close(gate)
	case err := <-submitted:
		submitted <- err
	case <-time.After(waitTimeout):
		t.Fatalf("Write: neither failed nor entered within %v", waitTimeout)
	}
	close(firstEntered)

	for range 2 {
		if err := recvErr(t, submitted, waitTimeout, "submission"); err != nil {
			t.Fatalf("submission = %v, want nil (its failure comes through WaitIO)", err)
		}
	}
	for range 2 {
		if r := waitResult(t, col); !errors.Is(r.Error, net.ErrClosed) {
			t.Errorf("%v racing with the take = %d bytes, %v, want an error matching net.ErrClosed", r.Context, r.Size, r.Error)
		}
	}
	if got := expectEOF(t, peer); len(got) != 0 {
		t.Errorf("peer read %q, want EOF", got)
	}
	if fds, ok := openFDs(); ok {
		if n := socketFDs(fds, ino); len(n) != 0 {
			t.Errorf("fds %v still refer to the socket", n)
		}
	}
}

// closeCounter is a caller's conn that counts its Close calls.
type closeCounter struct {
	*net.TCPConn
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return c.TCPConn.Close()
}

// TestCallerConnClosedOnce: the caller's conn is closed once, by its
// delegation, and neither Free nor Detach closes it again (io.Closer
// leaves a second Close undefined).
func TestCallerConnClosedOnce(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, release := range []string{"Free", "Detach"} {
			c, peer := tcpPair(t)
			cc := &closeCounter{TCPConn: c.(*net.TCPConn)}
			w := newWatcher(t, aio.Config{})
			col := collect(t, w)
			delegate(t, w, col, cc, peer)
			if n := cc.closes.Load(); n != 1 {
				t.Errorf("%s: after delegation the caller's conn was closed %d times, want 1", release, n)
			}
			if release == "Free" {
				if err := w.Free(cc); err != nil {
					t.Fatalf("Free = %v, want nil", err)
				}
			} else {
				nc, err := w.Detach(cc)
				if err != nil {
					t.Fatalf("Detach = %v, want nil", err)
				}
				nc.Close()
			}
			expectEOF(t, peer)
			if n := cc.closes.Load(); n != 1 {
				t.Errorf("after %s the caller's conn was closed %d times, want 1", release, n)
			}
		}
	})
}
