package engine_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// etWait bounds every wait of these tests for an event, a peer's bytes or
// a callback. Far above what any step needs on a loaded machine; reached
// only on a bug.
const etWait = 10 * time.Second

// etT0 is where manual clocks start.
var etT0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// etStreams are the stream networks every stream behaviour is tested on.
var etStreams = []string{"tcp", "unix"}

// etForStreams runs f as a subtest per stream network.
func etForStreams(t *testing.T, f func(t *testing.T, network string)) {
	t.Helper()
	for _, n := range etStreams {
		t.Run(n, func(t *testing.T) { f(t, n) })
	}
}

// etEvent is a connection and an error reported by a callback.
type etEvent struct {
	c   *engine.Conn
	err error
}

// etHandler is a Handler whose callbacks are its function fields (set
// before the engine starts, never after); a nil field behaves as
// BaseHandler. It reports every OnOpen and OnClose on its channels,
// without blocking the loop.
type etHandler struct {
	engine.BaseHandler
	boot     func(e *engine.Engine) engine.Action
	shutdown func(e *engine.Engine)
	open     func(c *engine.Conn) ([]byte, engine.Action)
	data     func(c *engine.Conn, in *engine.Inbound) engine.Action
	deadline func(c *engine.Conn, err error) engine.Action
	close    func(c *engine.Conn, err error)
	tick     func() (time.Duration, engine.Action)

	opened    chan *engine.Conn
	closed    chan etEvent
	deadlines chan etEvent
	overflow  atomic.Bool // a report found its channel full
	shutdowns atomic.Int32
}

func etNewHandler() *etHandler {
	return &etHandler{
		opened:    make(chan *engine.Conn, 1024),
		closed:    make(chan etEvent, 1024),
		deadlines: make(chan etEvent, 1024),
	}
}

// etEchoHandler echoes what it receives; on a UDP socket, to the source.
func etEchoHandler() *etHandler {
	h := etNewHandler()
	h.data = etEcho
	return h
}

func etEcho(c *engine.Conn, in *engine.Inbound) engine.Action {
	if from := in.From(); from != nil {
		c.WriteTo(in.Bytes(), from)
	} else {
		c.Write(in.Bytes())
	}
	in.Discard(in.Len())
	return engine.None
}

// etDrainEvents empties ch until the returned function is called, for a test
// whose events outnumber what ch holds and which does not look at them.
func etDrainEvents[T any](ch chan T) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-ch:
			case <-done:
				return
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func etReport[T any](h *etHandler, ch chan T, v T) {
	select {
	case ch <- v:
	default:
		h.overflow.Store(true)
	}
}

func (h *etHandler) OnBoot(e *engine.Engine) engine.Action {
	if h.boot != nil {
		return h.boot(e)
	}
	return engine.None
}

func (h *etHandler) OnShutdown(e *engine.Engine) {
	h.shutdowns.Add(1)
	if h.shutdown != nil {
		h.shutdown(e)
	}
}

func (h *etHandler) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	etReport(h, h.opened, c)
	if h.open != nil {
		return h.open(c)
	}
	return nil, engine.None
}

func (h *etHandler) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	if h.data != nil {
		return h.data(c, in)
	}
	return h.BaseHandler.OnData(c, in)
}

func (h *etHandler) OnDeadline(c *engine.Conn, err error) engine.Action {
	etReport(h, h.deadlines, etEvent{c, err})
	if h.deadline != nil {
		return h.deadline(c, err)
	}
	return engine.None
}

func (h *etHandler) OnClose(c *engine.Conn, err error) {
	if h.close != nil {
		h.close(c, err)
	}
	etReport(h, h.closed, etEvent{c, err})
}

func (h *etHandler) OnTick() (time.Duration, engine.Action) {
	if h.tick != nil {
		return h.tick()
	}
	return 0, engine.None
}

// etNew creates an engine, not started. The cleanup stops it (bounded:
// a stuck engine fails the test instead of hanging it) and checks that the
// handler's reports never overflowed.
func etNew(t testing.TB, h *etHandler, o engine.Options) *engine.Engine {
	t.Helper()
	e, err := engine.New(h, o)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	t.Cleanup(func() {
		etStop(t, e)
		if h.overflow.Load() {
			t.Errorf("a callback report overflowed its channel")
		}
	})
	return e
}

// etStart creates and starts an engine.
func etStart(t testing.TB, h *etHandler, o engine.Options) *engine.Engine {
	t.Helper()
	e := etNew(t, h, o)
	if err := e.Start(); err != nil {
		t.Fatalf("Start() = %v, want nil", err)
	}
	return e
}

// etStop stops e, failing t if that takes longer than etWait.
func etStop(t testing.TB, e *engine.Engine) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Stop()
	}()
	select {
	case <-done:
	case <-time.After(etWait):
		t.Errorf("Stop did not return within %v", etWait)
	}
}

// etAddr returns an address to listen on for network: loopback with a
// free port, or a socket file in a short-named directory (socket paths
// are limited to about 100 bytes) removed at cleanup.
func etAddr(t testing.TB, network string) string {
	t.Helper()
	switch network {
	case "unix":
		dir, err := os.MkdirTemp("", "et")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return filepath.Join(dir, "s")
	case "tcp6", "udp6":
		return "[::1]:0"
	}
	return "127.0.0.1:0"
}

// etListen makes e listen on network and returns the address.
func etListen(t testing.TB, e *engine.Engine, network string) net.Addr {
	t.Helper()
	a, err := e.Listen(network, etAddr(t, network))
	if err != nil {
		backendtest.SkipMissing(t, err)
		t.Fatalf("Listen(%q) = %v", network, err)
	}
	return a
}

// etDial connects to a, closed at cleanup.
//
// A Unix socket's connect fails with EAGAIN while the listener's backlog
// is full (a loop busy on a loaded machine has not accepted yet); the dial
// is tried again then, until etWait.
func etDial(t testing.TB, a net.Addr) net.Conn {
	t.Helper()
	deadline := time.Now().Add(etWait)
	c, err := net.DialTimeout(a.Network(), a.String(), etWait)
	for errors.Is(err, syscall.EAGAIN) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		c, err = net.DialTimeout(a.Network(), a.String(), time.Until(deadline))
	}
	if err != nil {
		t.Fatalf("Dial(%v) = %v", a, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// etServe starts an engine with h listening on network, dials it and
// returns both ends of the connection.
func etServe(t testing.TB, h *etHandler, o engine.Options, network string) (*engine.Engine, *engine.Conn, net.Conn) {
	t.Helper()
	e := etStart(t, h, o)
	a := etListen(t, e, network)
	peer := etDial(t, a)
	return e, etOpened(t, h), peer
}

// etOpened waits for the next OnOpen.
func etOpened(t testing.TB, h *etHandler) *engine.Conn {
	t.Helper()
	select {
	case c := <-h.opened:
		return c
	case <-time.After(etWait):
		t.Fatalf("no OnOpen within %v", etWait)
		return nil
	}
}

// etClosed waits for the next OnClose.
func etClosed(t testing.TB, h *etHandler) etEvent {
	t.Helper()
	select {
	case ev := <-h.closed:
		return ev
	case <-time.After(etWait):
		t.Fatalf("no OnClose within %v", etWait)
		return etEvent{}
	}
}

// etNoEvent fails t if ch holds an event; call it after Poke or another
// barrier that guarantees an event would have been reported.
func etNoEvent[T any](t testing.TB, ch chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		if reflect.ValueOf(v).Kind() == reflect.Pointer {
			// Not %v: it would read the fields of a *Conn its loop owns.
			t.Fatalf("unexpected %s: %T at %#x", what, v, reflect.ValueOf(v).Pointer())
		}
		t.Fatalf("unexpected %s: %v", what, v)
	default:
	}
}

// etRecv waits for a value on ch.
func etRecv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(etWait):
		t.Fatalf("no %s within %v", what, etWait)
		var zero T
		return zero
	}
}

// etDo runs f on c's loop and waits until it has run.
func etDo(t testing.TB, c *engine.Conn, f func(c *engine.Conn)) {
	t.Helper()
	done := make(chan struct{})
	if err := c.Execute(func(c *engine.Conn) {
		defer close(done)
		f(c)
	}); err != nil {
		t.Fatalf("Execute = %v", err)
	}
	etRecv(t, done, "Execute")
}

// etWaitFor polls cond until it holds, for at most etWait. For states
// that no callback or reply announces (counters, gauges).
func etWaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	stresstest.WaitFor(t, etWait, what, cond)
}

// etIsTimeout reports whether err is a deadline error as the engine
// promises: it matches os.ErrDeadlineExceeded and is a net.Error whose
// Timeout is true.
func etIsTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) && errors.As(err, &ne) && ne.Timeout()
}

// etGoID returns the calling goroutine's id, from its stack header.
func etGoID() int {
	var b [64]byte
	s := b[:runtime.Stack(b[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	if i := bytes.IndexByte(s, ' '); i > 0 {
		s = s[:i]
	}
	id, _ := strconv.Atoi(string(s))
	return id
}

// etRecorder collects strings from callbacks in order.
type etRecorder struct {
	mu  sync.Mutex
	evs []string
}

func (r *etRecorder) add(s string) {
	r.mu.Lock()
	r.evs = append(r.evs, s)
	r.mu.Unlock()
}

func (r *etRecorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.evs...)
}

// etCountServer is a Handler for load tests with more connections than
// etHandler's reports hold: it counts opens and closes, keeps the first
// close for another reason than the peer hanging up, and runs data
// (etEcho when nil) as OnData.
type etCountServer struct {
	engine.BaseHandler
	data          func(c *engine.Conn, in *engine.Inbound) engine.Action
	opens, closes atomic.Int64
	badClose      atomic.Pointer[error] // the first OnClose error other than io.EOF
}

func (s *etCountServer) OnOpen(*engine.Conn) ([]byte, engine.Action) {
	s.opens.Add(1)
	return nil, engine.None
}

func (s *etCountServer) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	if s.data != nil {
		return s.data(c, in)
	}
	return etEcho(c, in)
}

func (s *etCountServer) OnClose(_ *engine.Conn, err error) {
	if err != io.EOF {
		s.badClose.CompareAndSwap(nil, &err)
	}
	s.closes.Add(1)
}

// etStartCount starts an engine with h, stopped at cleanup.
func etStartCount(t testing.TB, h *etCountServer, o engine.Options) *engine.Engine {
	t.Helper()
	e, err := engine.New(h, o)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	t.Cleanup(func() { etStop(t, e) })
	if err := e.Start(); err != nil {
		t.Fatalf("Start() = %v", err)
	}
	return e
}
