package aio_test

// Helpers of the stress, deadline, swap, ordering, race, scale and
// allocation tests. Every name starts with "st" so that these files merge
// with the other test files of the package without clashes.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// stTimeout bounds every wait on an event that should happen promptly.
const stTimeout = 20 * time.Second

// stRace reports whether the test binary was built with -race.
var stRace = func() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}()

// stWatcher returns a watcher closed at the end of the test.
func stWatcher(t testing.TB, cfg aio.Config) *aio.Watcher {
	t.Helper()
	w, err := aio.NewWatcherConfig(cfg)
	if err != nil {
		t.Fatalf("NewWatcherConfig(%+v) = %v, want nil", cfg, err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// stClockWatcher returns a watcher whose loops read a manual clock.
func stClockWatcher(t testing.TB, cfg aio.Config) (*aio.Watcher, *aio.ManualClock) {
	t.Helper()
	clock := aio.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	w, err := aio.NewWatcherClock(cfg, clock)
	if err != nil {
		t.Fatalf("NewWatcherClock(%+v) = %v, want nil", cfg, err)
	}
	t.Cleanup(func() { w.Close() })
	return w, clock
}

// stWatchdog closes w if the test is still running after d, so that a
// WaitIO that would block for ever returns ErrWatcherClosed instead. The
// returned function reports whether it fired.
func stWatchdog(t testing.TB, d time.Duration, ws ...*aio.Watcher) (fired func() bool) {
	var mu sync.Mutex
	done := false
	tm := time.AfterFunc(d, func() {
		mu.Lock()
		done = true
		mu.Unlock()
		for _, w := range ws {
			w.Close()
		}
	})
	t.Cleanup(func() { tm.Stop() })
	return func() bool {
		mu.Lock()
		defer mu.Unlock()
		return done
	}
}

// stTCPPair returns the two ends of a loopback TCP connection.
func stTCPPair(t testing.TB) (a, peer net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v, want nil", err)
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
	d, err := net.DialTimeout("tcp", ln.Addr().String(), stTimeout)
	if err != nil {
		t.Fatalf("Dial = %v, want nil", err)
	}
	t.Cleanup(func() { d.Close() })
	acc := <-ch
	if acc.err != nil {
		t.Fatalf("Accept = %v, want nil", acc.err)
	}
	t.Cleanup(func() { acc.c.Close() })
	return acc.c, d
}

// stResult is a completion copied out of WaitIO's batch, with the bytes of
// a read, so that it stays valid after the next WaitIO call.
type stResult struct {
	aio.OpResult
	Data []byte // a copy of Buffer[:Size] for reads
}

// stCollector consumes a watcher's completions on its own goroutine and
// hands out copies, so that a test can check that nothing arrived.
type stCollector struct {
	ch   chan stResult
	done chan struct{}
	err  error // WaitIO's final error; read after done
}

// stCollect starts consuming w's completions. The watcher is closed and the
// goroutine joined at the end of the test.
func stCollect(t testing.TB, w *aio.Watcher) *stCollector {
	col := &stCollector{ch: make(chan stResult, 1<<14), done: make(chan struct{})}
	go col.run(w)
	t.Cleanup(func() {
		w.Close()
		for {
			select {
			case <-col.ch:
			case <-col.done:
				return
			}
		}
	})
	return col
}

func (col *stCollector) run(w *aio.Watcher) {
	defer close(col.done)
	for {
		res, err := w.WaitIO()
		if err != nil {
			col.err = err
			return
		}
		for _, r := range res {
			c := stResult{OpResult: r}
			if r.Operation == aio.OpRead && r.Size > 0 {
				c.Data = append([]byte(nil), r.Buffer[:r.Size]...)
			}
			if r.IsSwapBuffer {
				c.Buffer = nil // not valid after the next WaitIO
			}
			col.ch <- c
		}
	}
}

// next returns the next completion, failing the test if none arrives in
// time.
func (col *stCollector) next(t testing.TB) stResult {
	t.Helper()
	return col.nextWithin(t, stTimeout)
}

// nextWithin is next with a bound of d.
func (col *stCollector) nextWithin(t testing.TB, d time.Duration) stResult {
	t.Helper()
	select {
	case r := <-col.ch:
		return r
	case <-col.done:
		t.Fatalf("WaitIO() = %v while waiting for a completion", col.err)
	case <-time.After(d):
		t.Fatalf("no completion within %v", d)
	}
	panic("unreachable")
}

// none fails the test if a completion has arrived.
func (col *stCollector) none(t testing.TB) {
	t.Helper()
	select {
	case r := <-col.ch:
		t.Fatalf("unexpected completion: op %v ctx %v size %d err %v", r.Operation, r.Context, r.Size, r.Error)
	default:
	}
}

// stWaitFor polls cond until it holds, poking w's loops between tries, and
// fails the test after stTimeout. It is for states with no event to wait
// on (counters); every try is bounded and the whole wait is too.
func stWaitFor(t testing.TB, w *aio.Watcher, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(stTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, stTimeout)
		}
		if w != nil {
			w.Poke()
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// stSettle pokes w until its completion counter stops moving across a
// poke, so that whatever progress the loops can make has been made.
func stSettle(w *aio.Watcher) {
	last := w.Stats().Total()
	for range 1000 {
		w.Poke()
		s := w.Stats().Total()
		if s.Completions == last.Completions && s.BytesRead == last.BytesRead {
			return
		}
		last = s
	}
}

// stPattern returns n bytes determined by seed.
func stPattern(seed uint64, n int) []byte {
	b := make([]byte, n)
	g := stGen{s: seed}
	g.fill(b)
	return b
}

// stGen is a deterministic byte stream (xorshift64*), for checking long
// transfers without keeping them.
type stGen struct {
	s   uint64
	buf [8]byte
	n   int // unread bytes left in buf
}

func (g *stGen) next() uint64 {
	if g.s == 0 {
		g.s = 0x9e3779b97f4a7c15
	}
	g.s ^= g.s >> 12
	g.s ^= g.s << 25
	g.s ^= g.s >> 27
	return g.s * 0x2545f4914f6cdd1d
}

// fill writes the next len(b) bytes of the stream into b.
func (g *stGen) fill(b []byte) {
	for len(b) > 0 && g.n > 0 {
		b[0] = g.buf[8-g.n]
		b, g.n = b[1:], g.n-1
	}
	for len(b) >= 8 {
		binary.LittleEndian.PutUint64(b, g.next())
		b = b[8:]
	}
	if len(b) > 0 {
		binary.LittleEndian.PutUint64(g.buf[:], g.next())
		g.n = 8
		g.fill(b)
	}
}

// stFDs returns the process's open descriptors, by number.
func stFDs(t testing.TB) map[string]string {
	t.Helper()
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list descriptors: %v", err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		t.Fatalf("Readdirnames(/proc/self/fd) = %v, want nil", err)
	}
	self := fmt.Sprint(d.Fd())
	fds := make(map[string]string, len(names))
	for _, n := range names {
		if n == self {
			continue
		}
		target, _ := os.Readlink("/proc/self/fd/" + n)
		fds[n] = target
	}
	return fds
}

// stCheckFDs fails the test if descriptors beyond those in before stay open.
// It waits a bounded time, since a runtime cleanup may still be closing one.
func stCheckFDs(t testing.TB, before map[string]string) {
	t.Helper()
	var extra []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		extra = extra[:0]
		for n, target := range stFDs(t) {
			if _, ok := before[n]; !ok {
				extra = append(extra, n+" -> "+target)
			}
		}
		if len(extra) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if len(extra) > 0 {
		t.Errorf("descriptors leaked: %d, want 0: %v", len(extra), extra)
	}
}

// stWarmNet makes the runtime create its own poller descriptors, so that
// they are not counted as leaks by a test that opens the first socket.
func stWarmNet(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v, want nil", err)
	}
	ln.Close()
}

// stIsClosed reports whether err is what a request cut short by Free,
// Detach or a closed conn may carry.
func stIsClosed(err error) bool {
	return err == aio.ErrConnClosed || errors.Is(err, net.ErrClosed)
}

// stReadN reads exactly n bytes from c within stTimeout.
func stReadN(t testing.TB, c net.Conn, n int) []byte {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(stTimeout))
	defer c.SetReadDeadline(time.Time{})
	b := make([]byte, n)
	if got, err := io.ReadFull(c, b); err != nil {
		t.Fatalf("ReadFull(peer, %d) = %d, %v, want %d, nil", n, got, err, n)
	}
	return b
}

// stWrite writes b to c, failing the test on error.
func stWrite(t testing.TB, c net.Conn, b []byte) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(stTimeout))
	defer c.SetWriteDeadline(time.Time{})
	if n, err := c.Write(b); err != nil {
		t.Fatalf("peer Write(%d bytes) = %d, %v, want %d, nil", len(b), n, err, len(b))
	}
}
