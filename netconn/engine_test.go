package netconn_test

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// wait bounds every wait of these tests; reached only on a bug.
const wait = 10 * time.Second

// closeEvent is an OnClose.
type closeEvent struct {
	c   *engine.Conn
	err error
}

// handler is an engine.Handler whose OnData is its data field (set before
// the engine starts); it reports every OnOpen and OnClose.
type handler struct {
	engine.BaseHandler
	data   func(c *engine.Conn, in *engine.Inbound) engine.Action
	opened chan *engine.Conn
	closed chan closeEvent
}

func newHandler() *handler {
	return &handler{opened: make(chan *engine.Conn, 64), closed: make(chan closeEvent, 64)}
}

func (h *handler) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	h.opened <- c
	return nil, engine.None
}

func (h *handler) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	if h.data != nil {
		return h.data(c, in)
	}
	return h.BaseHandler.OnData(c, in)
}

func (h *handler) OnClose(c *engine.Conn, err error) { h.closed <- closeEvent{c, err} }

// echo is an OnData that echoes.
func echo(c *engine.Conn, in *engine.Inbound) engine.Action {
	c.Write(in.Bytes())
	in.Discard(in.Len())
	return engine.None
}

// collect returns an OnData that consumes everything and sends it on
// the channel returned.
func collect() (func(*engine.Conn, *engine.Inbound) engine.Action, chan string) {
	ch := make(chan string, 256)
	return func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		ch <- string(in.Bytes())
		in.Discard(in.Len())
		return engine.None
	}, ch
}

// startEngine starts an engine with h; the cleanup stops it.
func startEngine(t *testing.T, h *handler, o engine.Options) *engine.Engine {
	t.Helper()
	e, err := engine.New(h, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// addr returns an address to listen on: loopback with a free port, or a
// socket file in a short-named directory (socket paths are limited to
// about 100 bytes).
func addr(t *testing.T, network string) string {
	backendtest.NeedNetwork(t, network)
	if network != "unix" {
		return "127.0.0.1:0"
	}
	dir, err := os.MkdirTemp("", "nc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return filepath.Join(dir, "s")
}

// served returns a connection e serves (the engine's end) and its peer
// (a standard net.Conn, closed at cleanup).
func served(t *testing.T, e *engine.Engine, h *handler, network string) (*engine.Conn, net.Conn) {
	t.Helper()
	a, err := e.Listen(network, addr(t, network))
	if err != nil {
		t.Fatal(err)
	}
	peer, err := net.DialTimeout(network, a.String(), wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	return recv(t, h.opened, "OnOpen"), peer
}

// accepted returns a *netconn.Conn accepted from a netconn.Listener and
// its peer (a standard net.Conn); both are closed at cleanup.
func accepted(t *testing.T, network string) (*netconn.Conn, net.Conn) {
	t.Helper()
	ln, err := netconn.Listen(network, addr(t, network))
	if err != nil {
		backendtest.SkipMissing(t, err)
		t.Fatal(err)
	}
	defer ln.Close()
	peer, err := net.DialTimeout(network, ln.Addr().String(), wait)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	c, err := ln.(*netconn.Listener).AcceptConn()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, peer
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no %s within %v", what, wait)
		panic("unreachable")
	}
}

// gather reads strings from ch until they add up to want's length, and
// compares.
func gather(t *testing.T, ch <-chan string, want string) {
	t.Helper()
	var b strings.Builder
	for b.Len() < len(want) {
		b.WriteString(recv(t, ch, "OnData"))
	}
	if b.String() != want {
		t.Fatalf("OnData got %q, want %q", b.String(), want)
	}
}

// expect reads len(want) bytes from c and compares.
func expect(t *testing.T, c net.Conn, want string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(wait))
	defer c.SetReadDeadline(time.Time{})
	b := make([]byte, len(want))
	if n, err := io.ReadFull(c, b); err != nil || string(b) != want {
		t.Fatalf("read %q, %v, want %q", b[:n], err, want)
	}
}

func forStreams(t *testing.T, f func(t *testing.T, network string)) {
	backendtest.Run(t, func(t *testing.T) {
		for _, n := range []string{"tcp", "unix"} {
			t.Run(n, func(t *testing.T) { f(t, n) })
		}
	})
}

// stream checks a stream of numbered bytes, whoever reads it: the byte at
// offset p is byte p%4 (big-endian) of the number p/4, so that a byte
// lost, repeated or out of order shows at once.
type stream struct {
	mu       sync.Mutex
	pos      int64
	err      error
	progress chan struct{}
}

func newStream() *stream { return &stream{progress: make(chan struct{}, 1)} }

func streamByte(p int64) byte { return byte(uint32(p/4) >> (24 - 8*(p%4))) }

// fill writes the bytes from offset p into b.
func fill(b []byte, p int64) {
	for i := range b {
		b[i] = streamByte(p + int64(i))
	}
}

// check takes the next bytes of the stream read by their owner of the
// moment.
func (s *stream) check(b []byte, who string) {
	s.mu.Lock()
	for i, x := range b {
		if want := streamByte(s.pos + int64(i)); x != want && s.err == nil {
			s.err = errors.New(who + ": byte " + strconv.FormatInt(s.pos+int64(i), 10) + " wrong: lost, repeated or reordered")
		}
	}
	s.pos += int64(len(b))
	s.mu.Unlock()
	select {
	case s.progress <- struct{}{}:
	default:
	}
}

func (s *stream) state() (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pos, s.err
}

// waitPast waits until the stream's readers are past offset p.
func (s *stream) waitPast(t *testing.T, p int64) {
	t.Helper()
	for {
		pos, err := s.state()
		if err != nil {
			t.Fatal(err)
		}
		if pos >= p {
			return
		}
		recv(t, s.progress, "progress past offset "+strconv.FormatInt(p, 10))
	}
}

// TestEngineRoundTrip moves a connection engine → netconn → engine, ten
// times over, while its peer streams numbered bytes without pause: the
// engine consumes whole frames only, leaving the rest for the hand-over,
// and netconn's loop receives ahead of Read, so both directions carry
// bytes over. Every byte must arrive once, in order.
func TestEngineRoundTrip(t *testing.T) {
	forStreams(t, func(t *testing.T, network string) { testEngineRoundTrip(t, network) })
}

// TestEngineRoundTripAuto is TestEngineRoundTrip with each side on its
// own default: engine's Auto is io_uring, netconn's epoll.
func TestEngineRoundTripAuto(t *testing.T) {
	if _, set := os.LookupEnv("GALE_BACKEND"); set {
		t.Skip("GALE_BACKEND is set: both sides run that backend")
	}
	for _, n := range []string{"tcp", "unix"} {
		t.Run(n, func(t *testing.T) { testEngineRoundTrip(t, n) })
	}
}

func testEngineRoundTrip(t *testing.T, network string) {
	const (
		frame = 1000     // the engine's unit: a partial frame stays unconsumed
		step  = 64 << 10 // each owner reads at least this much
	)
	s := newStream()
	h := newHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		b, _ := in.Next(in.Len() / frame * frame)
		s.check(b, "engine")
		return engine.None
	}
	e := startEngine(t, h, engine.Options{})
	ec, peer := served(t, e, h, network)

	stop := make(chan struct{})
	sent := make(chan int64, 1)
	go func() {
		var p int64
		b := make([]byte, 4093) // odd sized, so writes and frames do not line up
		defer func() { sent <- p }()
		for {
			select {
			case <-stop:
				peer.(interface{ CloseWrite() error }).CloseWrite()
				return
			default:
			}
			fill(b, p)
			n, err := peer.Write(b)
			p += int64(n)
			if err != nil {
				return
			}
		}
	}()

	sizes := []int{1, 7, 4096, 100, 65536, 3, 999}
	read := func(nc *netconn.Conn, until int64) {
		t.Helper()
		nc.SetReadDeadline(time.Now().Add(wait))
		for i := 0; ; i++ {
			pos, err := s.state()
			if err != nil {
				t.Fatal(err)
			}
			if pos >= until {
				return
			}
			b := make([]byte, sizes[i%len(sizes)])
			n, err := nc.Read(b)
			s.check(b[:n], "netconn")
			if err != nil {
				t.Fatalf("netconn Read = %v at offset %d", err, pos)
			}
		}
	}
	var nc *netconn.Conn
	for round := range 10 {
		pos, _ := s.state()
		s.waitPast(t, pos+step)
		var err error
		if nc, err = netconn.FromEngine(ec); err != nil {
			t.Fatalf("round %d: FromEngine = %v", round, err)
		}
		if ev := recv(t, h.closed, "OnClose"); ev.c != ec || !errors.Is(ev.err, engine.ErrDetached) {
			t.Fatalf("round %d: OnClose(%p, %v), want (%p, ErrDetached)", round, ev.c, ev.err, ec)
		}
		pos, _ = s.state()
		read(nc, pos+step)
		if ec, err = nc.ToEngine(e); err != nil {
			t.Fatalf("round %d: ToEngine = %v", round, err)
		}
		if o := recv(t, h.opened, "OnOpen"); o != ec {
			t.Fatalf("round %d: OnOpen(%p), want the adopted conn %p", round, o, ec)
		}
	}
	nc, err := netconn.FromEngine(ec)
	if err != nil {
		t.Fatalf("FromEngine = %v", err)
	}
	defer nc.Close()
	close(stop)
	// The peer stops at a write's end; netconn reads the rest to EOF.
	nc.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, 32<<10)
	for {
		n, err := nc.Read(b)
		s.check(b[:n], "netconn")
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("netconn Read = %v", err)
		}
	}
	total := recv(t, sent, "the peer's count")
	pos, err := s.state()
	if err != nil {
		t.Fatal(err)
	}
	if pos != total {
		t.Fatalf("read %d bytes, the peer sent %d", pos, total)
	}
}

// TestFromEngineCarriesInput checks that the bytes OnData left unconsumed
// are what the netconn.Conn reads first, then the socket's, and that the
// Conn writes.
func TestFromEngineCarriesInput(t *testing.T) { forStreams(t, testFromEngineCarriesInput) }

func testFromEngineCarriesInput(t *testing.T, network string) {
	held := make(chan int, 16)
	h := newHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		held <- in.Len() // consumes nothing
		return engine.None
	}
	e := startEngine(t, h, engine.Options{})
	ec, peer := served(t, e, h, network)
	peer.Write([]byte("hello"))
	for n := 0; n < len("hello"); {
		n = recv(t, held, "OnData")
	}
	nc, err := netconn.FromEngine(ec)
	if err != nil {
		t.Fatalf("FromEngine = %v", err)
	}
	defer nc.Close()
	peer.Write([]byte(", world"))
	expect(t, nc, "hello, world")
	nc.Write([]byte("back"))
	expect(t, peer, "back")
}

// TestFromEngineInOnData moves a connection from OnData, as a handler
// that sees an upgrade request does: FromEngine there, or, where that
// would have to wait (ErrDetachBusy: io_uring receives ahead of OnData),
// from a goroutine while OnData leaves every byte unconsumed. The
// netconn.Conn reads the bytes after the request, which came with it,
// then the peer's next ones.
func TestFromEngineInOnData(t *testing.T) { forStreams(t, testFromEngineInOnData) }

func testFromEngineInOnData(t *testing.T, network string) {
	type moved struct {
		nc     *netconn.Conn
		err    error
		direct bool // FromEngine succeeded in OnData
	}
	ch := make(chan moved, 1)
	moving := false
	h := newHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if moving {
			return engine.None // the bytes go over with the connection
		}
		if _, err := in.ReadUntil('\n'); err != nil {
			return engine.None
		}
		moving = true
		nc, err := netconn.FromEngine(c)
		if errors.Is(err, engine.ErrDetachBusy) {
			go func() {
				nc, err := netconn.FromEngine(c)
				ch <- moved{nc, err, false}
			}()
			return engine.None
		}
		ch <- moved{nc, err, true}
		return engine.None
	}
	e := startEngine(t, h, engine.Options{})
	_, peer := served(t, e, h, network)
	peer.Write([]byte("UPGRADE\nnew protocol"))
	m := recv(t, ch, "FromEngine")
	if m.err != nil {
		t.Fatalf("FromEngine (in OnData: %v) = %v", m.direct, m.err)
	}
	defer m.nc.Close()
	if ring := e.Stats().Loops[0].Backend == backend.IOURing; m.direct == ring {
		t.Errorf("FromEngine in OnData succeeded: %v on %v, want it to on epoll only", m.direct, e.Stats().Loops[0].Backend)
	}
	peer.Write([]byte(", and more"))
	expect(t, m.nc, "new protocol, and more")
}

// TestToEngineCarriesBuffered checks that the bytes netconn received
// ahead of Read reach OnData, first and without the peer sending more,
// and that what the peer sends next follows them. The Conn is an
// accepted one.
func TestToEngineCarriesBuffered(t *testing.T) { forStreams(t, testToEngineCarriesBuffered) }

func testToEngineCarriesBuffered(t *testing.T, network string) {
	h := newHandler()
	var got chan string
	h.data, got = collect()
	e := startEngine(t, h, engine.Options{})
	nc, peer := accepted(t, network)
	peer.Write([]byte("abc"))
	// The first Read parks; the loop's receive takes "abc", gives it "a"
	// and keeps the rest for the next Read.
	expect(t, nc, "a")
	ec, err := nc.ToEngine(e)
	if err != nil {
		t.Fatalf("ToEngine = %v", err)
	}
	if o := recv(t, h.opened, "OnOpen"); o != ec {
		t.Fatalf("OnOpen(%p), want %p", o, ec)
	}
	gather(t, got, "bc")
	peer.Write([]byte("de"))
	gather(t, got, "de")
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Read after ToEngine = %v, want net.ErrClosed", err)
	}
	ec.Write([]byte("from the engine"))
	expect(t, peer, "from the engine")
}

// TestMovesIdle moves an accepted netconn.Conn to an engine and back a few
// times while its peer sends nothing; it then still serves the peer, and
// no hand-over left a byte or an event behind.
func TestMovesIdle(t *testing.T) { forStreams(t, testMovesIdle) }

func testMovesIdle(t *testing.T, network string) {
	h := newHandler()
	h.data = echo
	e := startEngine(t, h, engine.Options{})
	nc, peer := accepted(t, network)
	var ec *engine.Conn
	for round := range 3 {
		var err error
		if ec, err = nc.ToEngine(e); err != nil {
			t.Fatalf("round %d: ToEngine = %v", round, err)
		}
		recv(t, h.opened, "OnOpen")
		if nc, err = netconn.FromEngine(ec); err != nil {
			t.Fatalf("round %d: FromEngine = %v", round, err)
		}
		defer nc.Close()
		if ev := recv(t, h.closed, "OnClose"); !errors.Is(ev.err, engine.ErrDetached) {
			t.Fatalf("round %d: OnClose(%v), want ErrDetached", round, ev.err)
		}
	}
	peer.Write([]byte("to netconn"))
	expect(t, nc, "to netconn")
	ec, err := nc.ToEngine(e)
	if err != nil {
		t.Fatalf("ToEngine = %v", err)
	}
	peer.Write([]byte("ping"))
	expect(t, peer, "ping")
	ec.Close()
	if ev := recv(t, h.closed, "OnClose"); ev.c != ec || ev.err != nil {
		t.Fatalf("OnClose(%p, %v), want (%p, nil)", ev.c, ev.err, ec)
	}
}

// TestToEngineWaitsForRead calls ToEngine while a Read is parked: the
// Read ends as usual (with the first byte the peer sends), or, if
// ToEngine came first, fails with net.ErrClosed; either way the engine
// gets every byte the Read did not, in order.
func TestToEngineWaitsForRead(t *testing.T) { forStreams(t, testToEngineWaitsForRead) }

func testToEngineWaitsForRead(t *testing.T, network string) {
	h := newHandler()
	var got chan string
	h.data, got = collect()
	e := startEngine(t, h, engine.Options{})
	nc, peer := accepted(t, network)
	type result struct {
		s   string
		err error
	}
	read := make(chan result, 1)
	go func() {
		b := make([]byte, 1)
		n, err := nc.Read(b)
		read <- result{string(b[:n]), err}
	}()
	moved := make(chan error, 1)
	go func() {
		_, err := nc.ToEngine(e)
		moved <- err
	}()
	peer.Write([]byte("xyz"))
	if err := recv(t, moved, "ToEngine"); err != nil {
		t.Fatalf("ToEngine = %v", err)
	}
	r := recv(t, read, "Read")
	if r.err != nil && !errors.Is(r.err, net.ErrClosed) {
		t.Fatalf("the parked Read = %q, %v, want a byte or net.ErrClosed", r.s, r.err)
	}
	gather(t, got, "xyz"[len(r.s):])
}

// TestMoveErrors checks the failures: moving a closed connection either
// way, FromEngine from a callback that would have to wait for the loop
// (ErrDetachBusy, and the connection is still served), FromEngine of a
// UDP socket, and ToEngine onto a stopped engine (the Conn is closed).
func TestMoveErrors(t *testing.T) { backendtest.Run(t, testMoveErrors) }

func testMoveErrors(t *testing.T) {
	h := newHandler()
	h.data = echo
	e := startEngine(t, h, engine.Options{})

	t.Run("FromEngine closed", func(t *testing.T) {
		ec, _ := served(t, e, h, "tcp")
		ec.Close()
		recv(t, h.closed, "OnClose")
		if nc, err := netconn.FromEngine(ec); nc != nil || !errors.Is(err, net.ErrClosed) {
			t.Errorf("FromEngine(closed) = %v, %v, want nil, net.ErrClosed", nc, err)
		}
	})
	t.Run("ToEngine closed", func(t *testing.T) {
		nc, _ := accepted(t, "tcp")
		nc.Close()
		if ec, err := nc.ToEngine(e); ec != nil || !errors.Is(err, net.ErrClosed) {
			t.Errorf("ToEngine of a closed Conn = %v, %v, want nil, net.ErrClosed", ec, err)
		}
	})
	t.Run("FromEngine busy", func(t *testing.T) {
		ec, peer := served(t, e, h, "tcp")
		errc := make(chan error, 1)
		// The conn is idle: its receive is pending, so its loop would
		// have to run for the hand-over.
		ec.Execute(func(c *engine.Conn) {
			nc, err := netconn.FromEngine(c)
			if nc != nil {
				nc.Close()
			}
			errc <- err
		})
		if err := recv(t, errc, "FromEngine from Execute"); !errors.Is(err, engine.ErrDetachBusy) {
			t.Fatalf("FromEngine from a callback with a receive pending = %v, want ErrDetachBusy", err)
		}
		peer.Write([]byte("still served"))
		expect(t, peer, "still served")
	})
	t.Run("FromEngine UDP", func(t *testing.T) {
		backendtest.NeedNetwork(t, "udp")
		if _, err := e.Listen("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		uc := recv(t, h.opened, "OnOpen")
		if nc, err := netconn.FromEngine(uc); nc != nil || !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("FromEngine(UDP) = %v, %v, want nil, errors.ErrUnsupported", nc, err)
		}
	})
	t.Run("ToEngine stopped", func(t *testing.T) {
		stopped := startEngine(t, newHandler(), engine.Options{})
		stopped.Stop()
		nc, peer := accepted(t, "tcp")
		if ec, err := nc.ToEngine(stopped); ec != nil || !errors.Is(err, engine.ErrEngineStopped) {
			t.Errorf("ToEngine(stopped engine) = %v, %v, want nil, ErrEngineStopped", ec, err)
		}
		if _, err := nc.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after a failed ToEngine = %v, want net.ErrClosed", err)
		}
		peer.SetReadDeadline(time.Now().Add(wait))
		if n, err := peer.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("the peer's Read = %d, %v, want io.EOF", n, err)
		}
	})
}

// TestToEngineStreaming moves an accepted Conn onto an engine while its
// peer streams without pause, after Reads that left netconn's loop
// receiving ahead (and, with the stash full, paused): what Read returned
// and what OnData gets must make up the stream, with no byte lost,
// repeated or reordered.
func TestToEngineStreaming(t *testing.T) { forStreams(t, testToEngineStreaming) }

func testToEngineStreaming(t *testing.T, network string) {
	const total = 8 << 20
	s := newStream()
	h := newHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		s.check(in.Bytes(), "engine")
		in.Discard(in.Len())
		return engine.None
	}
	e := startEngine(t, h, engine.Options{})
	nc, peer := accepted(t, network)
	go func() {
		b := make([]byte, total)
		fill(b, 0)
		peer.Write(b)
	}()
	nc.SetReadDeadline(time.Now().Add(wait))
	b := make([]byte, 1000)
	for {
		pos, _ := s.state()
		if pos >= 1<<20 {
			break
		}
		n, err := nc.Read(b)
		s.check(b[:n], "netconn")
		if err != nil {
			t.Fatalf("Read = %v", err)
		}
	}
	if _, err := nc.ToEngine(e); err != nil {
		t.Fatalf("ToEngine = %v", err)
	}
	s.waitPast(t, total)
	if pos, err := s.state(); err != nil || pos != total {
		t.Fatalf("the stream's readers got %d bytes, %v; want %d, nil", pos, err, total)
	}
}
