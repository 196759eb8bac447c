package aio_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// waitTimeout bounds every wait for a completion or a peer's data. Far
// above what any step needs on a loaded machine; reached only on a bug.
const waitTimeout = 10 * time.Second

// pairFunc returns a connected stream pair: c for the watcher, peer for
// the test to drive with plain net calls. Both are closed at cleanup.
type pairFunc func(t testing.TB) (c, peer net.Conn)

// networks are the socket families the watcher is tested over.
var networks = []struct {
	name string
	pair pairFunc
}{
	{"tcp", tcpPair},
	{"unix", unixPair},
}

// forNetworks runs f as a subtest per socket family.
func forNetworks(t *testing.T, f func(t *testing.T, pair pairFunc)) {
	t.Helper()
	for _, n := range networks {
		t.Run(n.name, func(t *testing.T) { f(t, n.pair) })
	}
}

// newWatcher returns a watcher configured by cfg, closed at cleanup.
func newWatcher(t testing.TB, cfg aio.Config) *aio.Watcher {
	t.Helper()
	w, err := aio.NewWatcherConfig(cfg)
	if err != nil {
		t.Fatalf("NewWatcherConfig(%+v) = %v", cfg, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// rawPair connects two stream sockets through a listener on addr, which
// it closes before returning. The caller owns both conns.
func rawPair(network, addr string) (c, peer net.Conn, err error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := ln.Accept()
		ch <- accepted{c, err}
	}()
	c, err = net.Dial(network, ln.Addr().String())
	if err != nil {
		ln.Close()
		if a := <-ch; a.c != nil {
			a.c.Close()
		}
		return nil, nil, err
	}
	a := <-ch
	if a.err != nil {
		c.Close()
		return nil, nil, a.err
	}
	return c, a.c, nil
}

func closeAtCleanup(t testing.TB, conns ...net.Conn) {
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close() // fails for a delegated conn: already closed
		}
	})
}

// tcpPair is a pairFunc over 127.0.0.1.
func tcpPair(t testing.TB) (c, peer net.Conn) {
	t.Helper()
	c, peer, err := rawPair("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("tcp pair: %v", err)
	}
	closeAtCleanup(t, c, peer)
	return c, peer
}

// unixPair is a pairFunc over an AF_UNIX stream socket in backendtest.TempDir(t).
func unixPair(t testing.TB) (c, peer net.Conn) {
	t.Helper()
	c, peer, err := rawPair("unix", filepath.Join(backendtest.TempDir(t), "s"))
	if err != nil {
		backendtest.SkipMissing(t, err)
		t.Fatalf("unix pair: %v", err)
	}
	closeAtCleanup(t, c, peer)
	return c, peer
}

// result is an OpResult copied out of WaitIO so that it stays valid after
// the next WaitIO: Data is a copy of Buffer[:Size], and a swap Buffer is
// replaced by a copy. A caller Buffer is kept as is, so tests can check it
// is the caller's slice. Conn is kept too: a result holds its conn alive.
type result struct {
	aio.OpResult
	Data []byte
}

func (r result) String() string {
	return fmt.Sprintf("{%v ctx=%v size=%d swap=%v err=%v data=%.32q}",
		r.Operation, r.Context, r.Size, r.IsSwapBuffer, r.Error, r.Data)
}

// collector is the goroutine draining a watcher's WaitIO: it sends a copy
// of every completion on ch, and ends when WaitIO fails (Close).
type collector struct {
	ch   chan result
	stop chan struct{}
	done chan struct{}
	err  error // WaitIO's final error; read after done is closed
}

// collect starts draining w. At cleanup it closes w and waits for the
// goroutine to end.
func collect(t testing.TB, w *aio.Watcher) *collector {
	c := &collector{ch: make(chan result), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run(w)
	t.Cleanup(func() {
		close(c.stop)
		w.Close()
		<-c.done
	})
	return c
}

func (c *collector) run(w *aio.Watcher) {
	defer close(c.done)
	for {
		rs, err := w.WaitIO()
		if err != nil {
			c.err = err
			return
		}
		for _, r := range rs {
			select {
			case c.ch <- copyResult(r):
			case <-c.stop:
				return
			}
		}
	}
}

func copyResult(r aio.OpResult) result {
	// Clamp, so that a Size beyond the buffer (a bug the tests report)
	// cannot crash the collector.
	n := max(0, min(r.Size, len(r.Buffer)))
	cp := result{OpResult: r, Data: bytes.Clone(r.Buffer[:n])}
	if r.IsSwapBuffer {
		cp.Buffer = bytes.Clone(r.Buffer)
	}
	return cp
}

// waitResults returns the next n completions of c, failing the test if
// they do not all arrive within waitTimeout.
func waitResults(t testing.TB, c *collector, n int) []result {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	rs := make([]result, 0, n)
	for len(rs) < n {
		select {
		case r := <-c.ch:
			rs = append(rs, r)
		case <-c.done:
			t.Fatalf("WaitIO ended (%v) after %d of %d completions: %v", c.err, len(rs), n, rs)
		case <-timer.C:
			t.Fatalf("waited %v for %d completions, got %d: %v", waitTimeout, n, len(rs), rs)
		}
	}
	return rs
}

// waitResult returns the next completion of c.
func waitResult(t testing.TB, c *collector) result {
	t.Helper()
	return waitResults(t, c, 1)[0]
}

// waitFor polls cond until it holds, failing after waitTimeout. For
// conditions nothing signals (counters, runtime cleanups).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	stresstest.WaitFor(t, waitTimeout, what, cond)
}

// readPeer reads exactly n bytes from peer.
func readPeer(t testing.TB, peer net.Conn, n int) []byte {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(waitTimeout))
	buf := make([]byte, n)
	if got, err := io.ReadFull(peer, buf); err != nil {
		t.Fatalf("peer ReadFull(%d bytes) = %d, %v", n, got, err)
	}
	return buf
}

// drainPeer reads n bytes from peer on a goroutine and sends the outcome.
func drainPeer(peer net.Conn, n int) <-chan error {
	done := make(chan error, 1)
	go func() {
		peer.SetReadDeadline(time.Now().Add(waitTimeout))
		_, err := io.CopyN(io.Discard, peer, int64(n))
		done <- err
	}()
	return done
}

// writePeer writes s from peer.
func writePeer(t testing.TB, peer net.Conn, s string) {
	t.Helper()
	peer.SetWriteDeadline(time.Now().Add(waitTimeout))
	if _, err := peer.Write([]byte(s)); err != nil {
		t.Fatalf("peer Write(%q) = %v", s, err)
	}
}

// expectEOF checks that peer reads end of file (after any data in
// flight, which it discards and returns).
func expectEOF(t testing.TB, peer net.Conn) []byte {
	t.Helper()
	peer.SetReadDeadline(time.Now().Add(waitTimeout))
	data, err := io.ReadAll(peer)
	if err != nil {
		t.Fatalf("peer read until EOF = %d bytes, %v; want EOF", len(data), err)
	}
	return data
}

// roundTrip checks that a and b are connected and working both ways.
func roundTrip(t testing.TB, a, b net.Conn) {
	t.Helper()
	writePeer(t, a, "ping")
	if got := readPeer(t, b, 4); string(got) != "ping" {
		t.Fatalf("read %q, want %q", got, "ping")
	}
	writePeer(t, b, "pong")
	if got := readPeer(t, a, 4); string(got) != "pong" {
		t.Fatalf("read %q, want %q", got, "pong")
	}
}

// delegate hands c to w with a one-byte write and waits for it to
// complete, leaving c delegated with nothing pending. The peer receives
// the byte, which delegate reads.
func delegate(t testing.TB, w *aio.Watcher, col *collector, c, peer net.Conn) {
	t.Helper()
	if err := w.Write("delegate", c, []byte{'d'}); err != nil {
		t.Fatalf("Write = %v, want nil", err)
	}
	if r := waitResult(t, col); r.Error != nil || r.Size != 1 {
		t.Fatalf("delegating Write completed with %v, want size 1, nil error", r)
	}
	readPeer(t, peer, 1)
}

// isClosedErr reports whether err is the error of a use of a closed conn.
func isClosedErr(err error) bool { return errors.Is(err, net.ErrClosed) }

// startEchoServer serves TCP on 127.0.0.1 with a watcher of its own:
// every connection sends back what it receives, through nil-buffer reads
// and writes of copies. It returns the address. Everything stops at
// cleanup.
func startEchoServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v", err)
	}
	w := newWatcher(t, aio.Config{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if err := w.Read(nil, c, nil); err != nil {
				c.Close()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			rs, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, r := range rs {
				switch {
				case r.Error != nil:
					w.Free(r.Conn)
				case r.Operation == aio.OpRead && r.Size > 0:
					w.Write(nil, r.Conn, bytes.Clone(r.Buffer[:r.Size]))
				default:
					w.Read(nil, r.Conn, nil)
				}
			}
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		w.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}
