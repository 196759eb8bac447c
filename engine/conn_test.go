package engine_test

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"

	"github.com/galeio/gale/engine"
)

// etCheckMsgs parses writers×count messages from r and reports the first
// one that is torn, interleaved or out of order.
func etCheckMsgs(r io.Reader, writers, count int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	next := make([]int, writers)
	for i := range writers * count {
		var hdr [9]byte
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return fmt.Errorf("message %d: header: %v", i, err)
		}
		id := int(hdr[0])
		if id >= writers {
			return fmt.Errorf("message %d: writer %d: a header was torn", i, id)
		}
		if seq := int(binary.BigEndian.Uint32(hdr[1:])); seq != next[id] {
			return fmt.Errorf("message %d: writer %d sequence %d, want %d", i, id, seq, next[id])
		}
		next[id]++
		n := int(binary.BigEndian.Uint32(hdr[5:]))
		if n > 1<<20 {
			return fmt.Errorf("message %d: writer %d: length %d: a header was torn", i, id, n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return fmt.Errorf("message %d: body: %v", i, err)
		}
		for j, b := range body {
			if int(b) != id {
				return fmt.Errorf("message %d of writer %d: byte %d is %d: another write interleaved", i, id, j, b)
			}
		}
	}
	return nil
}

// TestConcurrentWrite checks that Writes from many goroutines arrive
// whole and contiguous, each writer's in order, and with Writev, that a
// Writev's buffers arrive together.
func TestConcurrentWrite(t *testing.T) { backendtest.Run(t, testConcurrentWrite) }

func testConcurrentWrite(t *testing.T) {
	const writers, count = 8, 150
	for _, api := range []string{"Write", "Writev"} {
		t.Run(api, func(t *testing.T) {
			etForStreams(t, func(t *testing.T, network string) {
				h := etNewHandler()
				_, c, peer := etServe(t, h, engine.Options{}, network)
				peer.SetReadDeadline(time.Now().Add(etWait))
				checked := make(chan error, 1)
				go func() { checked <- etCheckMsgs(peer, writers, count) }()
				var wg sync.WaitGroup
				for id := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for seq := range count {
							m := stresstest.RaceMsg(id, seq, (seq*997+id*131)%9000)
							var n int
							var err error
							if api == "Write" {
								n, err = c.Write(m)
							} else {
								n, err = c.Writev(etPieces(m, 64))
							}
							if n != len(m) || err != nil {
								t.Errorf("%s(%d bytes) = %d, %v", api, len(m), n, err)
								return
							}
						}
					}()
				}
				wg.Wait()
				if err := etRecv(t, checked, "the reader"); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// TestCloseFromGoroutine checks that Close from another goroutine, with
// output queued, writes all of it before closing.
func TestCloseFromGoroutine(t *testing.T) { backendtest.Run(t, testCloseFromGoroutine) }

func testCloseFromGoroutine(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etNewHandler()
		_, c, peer := etServe(t, h, engine.Options{}, network)
		out := etPattern(2 << 20)
		got := etDrain(peer)
		go func() {
			c.Write(out[:1<<20])
			c.Write(out[1<<20:])
			c.Close()
		}()
		b := etRecv(t, got, "the peer's read to EOF")
		if len(b) != len(out) || etCheckPattern(b) >= 0 {
			t.Fatalf("peer read %d bytes (difference at %d), want %d", len(b), etCheckPattern(b), len(out))
		}
		if ev := etClosed(t, h); ev.err != nil {
			t.Errorf("OnClose(err = %v), want nil", ev.err)
		}
		if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after close = %v, want net.ErrClosed", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close() = %v, want nil", err)
		}
	})
}

// TestCloseWrite checks that after CloseWrite the peer reads the queued
// output and then end of file, while the engine still receives what the
// peer sends.
func TestCloseWrite(t *testing.T) { backendtest.Run(t, testCloseWrite) }

func testCloseWrite(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		got := make(chan string, 16)
		h := etNewHandler()
		h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
			got <- string(in.Bytes())
			in.Discard(in.Len())
			return engine.None
		}
		_, c, peer := etServe(t, h, engine.Options{}, network)
		out := etPattern(1 << 20)
		read := etDrain(peer)
		c.Write(out)
		if err := c.CloseWrite(); err != nil {
			t.Fatalf("CloseWrite() = %v", err)
		}
		if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Write after CloseWrite = %v, want net.ErrClosed", err)
		}
		b := etRecv(t, read, "the peer's read to EOF")
		if len(b) != len(out) || etCheckPattern(b) >= 0 {
			t.Fatalf("peer read %d bytes (difference at %d), want %d", len(b), etCheckPattern(b), len(out))
		}
		const more = "still listening?"
		peer.Write([]byte(more))
		s := ""
		for len(s) < len(more) {
			s += etRecv(t, got, "OnData after CloseWrite")
		}
		if s != more {
			t.Errorf("OnData got %q, want %q", s, more)
		}
		peer.Close()
		if ev := etClosed(t, h); !errors.Is(ev.err, io.EOF) {
			t.Errorf("OnClose(err = %v), want io.EOF", ev.err)
		}
	})
}

// TestWake checks that Wake calls OnData with no new bytes, with what an
// earlier call left, on the loop.
func TestWake(t *testing.T) { backendtest.Run(t, testWake) }

func testWake(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		seen := make(chan string, 16)
		h := etNewHandler()
		h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
			seen <- string(in.Bytes())
			if in.Len() == 6 {
				in.Discard(3)
			}
			return engine.None
		}
		_, c, peer := etServe(t, h, engine.Options{}, network)
		if err := c.Wake(); err != nil {
			t.Fatalf("Wake() = %v", err)
		}
		if s := etRecv(t, seen, "OnData after Wake"); s != "" {
			t.Fatalf("OnData after Wake saw %q, want nothing", s)
		}
		peer.Write([]byte("abcdef"))
		first := etRecv(t, seen, "OnData")
		for len(first) < 6 { // the bytes may come in pieces
			first = etRecv(t, seen, "OnData")
		}
		c.Wake()
		if s := etRecv(t, seen, "OnData after Wake"); s != first[3:] {
			t.Fatalf("OnData after Wake saw %q, want the leftover %q", s, first[3:])
		}
	})
}

// TestExecute checks that Execute runs its functions on the loop, in the
// order each goroutine posted them, and not once the conn is closed.
func TestExecute(t *testing.T) { backendtest.Run(t, testExecute) }

func testExecute(t *testing.T) {
	h := etNewHandler()
	loopID := make(chan int, 1)
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		select {
		case loopID <- etGoID():
		default:
		}
		in.Discard(in.Len())
		return engine.None
	}
	e, c, peer := etServe(t, h, engine.Options{}, "tcp")
	peer.Write([]byte("x"))
	gid := etRecv(t, loopID, "OnData")

	const posters, count = 4, 500
	var mu sync.Mutex
	var order [posters][]int
	var wrongGoroutine int
	var wg sync.WaitGroup
	for p := range posters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range count {
				if err := c.Execute(func(*engine.Conn) {
					mu.Lock()
					order[p] = append(order[p], i)
					if etGoID() != gid {
						wrongGoroutine++
					}
					mu.Unlock()
				}); err != nil {
					t.Errorf("Execute = %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	etDo(t, c, func(*engine.Conn) {})
	mu.Lock()
	for p := range posters {
		if len(order[p]) != count {
			t.Errorf("poster %d: %d functions ran, want %d", p, len(order[p]), count)
		}
		for i, v := range order[p] {
			if v != i {
				t.Fatalf("poster %d: function %d ran at position %d", p, v, i)
			}
		}
	}
	if wrongGoroutine > 0 {
		t.Errorf("%d functions ran off the loop goroutine", wrongGoroutine)
	}
	mu.Unlock()

	c.Close()
	etClosed(t, h)
	ran := make(chan struct{}, 1)
	if err := c.Execute(func(*engine.Conn) { ran <- struct{}{} }); err != nil {
		t.Fatalf("Execute on a closed conn = %v, want nil", err)
	}
	e.Poke() // runs after the function posted before it
	select {
	case <-ran:
		t.Errorf("Execute ran a function on a closed conn")
	default:
	}
}

// TestContextAndAddrs checks SetContext/Context from other goroutines and
// the callbacks, and the addresses against the peer's.
func TestContextAndAddrs(t *testing.T) { backendtest.Run(t, testContextAndAddrs) }

func testContextAndAddrs(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		seen := make(chan any, 1)
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			seen <- c.Context()
			c.SetContext("set by OnData")
			in.Discard(in.Len())
			return engine.None
		}
		_, c, peer := etServe(t, h, engine.Options{}, network)
		if v := c.Context(); v != nil {
			t.Errorf("Context() = %v before SetContext, want nil", v)
		}
		c.SetContext(42)
		peer.Write([]byte("x"))
		if v := etRecv(t, seen, "OnData"); v != 42 {
			t.Errorf("Context() in OnData = %v, want 42", v)
		}
		etDo(t, c, func(*engine.Conn) {})
		if v := c.Context(); v != "set by OnData" {
			t.Errorf("Context() = %v, want the value OnData set", v)
		}
		if got, want := c.LocalAddr().String(), peer.RemoteAddr().String(); got != want {
			t.Errorf("LocalAddr() = %s, want %s", got, want)
		}
		if network == "tcp" {
			if got, want := c.RemoteAddr().String(), peer.LocalAddr().String(); got != want {
				t.Errorf("RemoteAddr() = %s, want %s", got, want)
			}
		}
		if got, want := c.LocalAddr().Network(), network; got != want {
			t.Errorf("LocalAddr().Network() = %s, want %s", got, want)
		}
	})
}

// TestOutboundBuffered checks the queued output against Stats while a
// peer does not read, and that both fall to zero once it does.
func TestOutboundBuffered(t *testing.T) { backendtest.Run(t, testOutboundBuffered) }

func testOutboundBuffered(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		h := etNewHandler()
		e, c, peer := etServe(t, h, engine.Options{Loops: 1, WriteHighWater: 64 << 20, MaxWriteBuffer: 64 << 20}, network)
		if n := c.OutboundBuffered(); n != 0 {
			t.Fatalf("OutboundBuffered() = %d on a new conn", n)
		}
		const chunk, total = 64 << 10, 16 << 20
		buf := etPattern(chunk)
		for range total / chunk {
			if _, err := c.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		etDo(t, c, func(*engine.Conn) {})
		n := c.OutboundBuffered()
		if n <= 0 || n > total {
			t.Fatalf("OutboundBuffered() = %d after %d bytes to a peer that does not read, want 0 < n <= %d", n, total, total)
		}
		if q := e.Stats().Queued; q != int64(n) {
			t.Errorf("Stats().Queued = %d, want OutboundBuffered() = %d", q, n)
		}
		got := etReadFull(t, peer, total)
		if i := etCheckPatternChunks(got, chunk); i >= 0 {
			t.Fatalf("peer read a difference at %d", i)
		}
		etWaitFor(t, "empty queue", func() bool { return c.OutboundBuffered() == 0 && e.Stats().Queued == 0 })
	})
}

// etCheckPatternChunks checks got as repeats of etPattern(chunk).
func etCheckPatternChunks(got []byte, chunk int) int {
	for off := 0; off < len(got); off += chunk {
		if i := etCheckPattern(got[off:min(off+chunk, len(got))]); i >= 0 {
			return off + i
		}
	}
	return -1
}

// etPieces cuts m into its 9-byte header and up to n pieces of body: one
// message for Writev.
func etPieces(m []byte, n int) [][]byte {
	bufs := [][]byte{m[:9]}
	body := m[9:]
	step := max(1, len(body)/n)
	for len(body) > 0 {
		k := min(step, len(body))
		bufs = append(bufs, body[:k])
		body = body[k:]
	}
	return bufs
}

// TestWildcardAddrs checks the addresses of connections accepted on a
// wildcard listener, which have no shared local address, including IPv4
// peers reaching a dual-stack one: both must read as package net shows
// them to the peer.
func TestWildcardAddrs(t *testing.T) { backendtest.Run(t, testWildcardAddrs) }

func testWildcardAddrs(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0"} {
		t.Run(addr, func(t *testing.T) {
			h := etNewHandler()
			e := etStart(t, h, engine.Options{})
			a, err := e.Listen("tcp", addr)
			if err != nil {
				t.Skipf("Listen(tcp, %s) = %v", addr, err)
			}
			port := a.(*net.TCPAddr).Port
			peer := etDial(t, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
			c := etOpened(t, h)
			if got, want := c.LocalAddr().String(), peer.RemoteAddr().String(); got != want {
				t.Errorf("LocalAddr() = %s, want %s", got, want)
			}
			if got, want := c.RemoteAddr().String(), peer.LocalAddr().String(); got != want {
				t.Errorf("RemoteAddr() = %s, want %s", got, want)
			}
		})
	}
}

// TestAddrsAfterClose checks LocalAddr in OnClose and after, on a
// wildcard listener, where the local address is asked of the socket: it
// must be the connection's own even though its descriptor is closed and
// new listeners may have taken the number. Before the descriptor had a
// lifetime rule, getsockname ran on the closed number and returned an
// unrelated listener's address (or nothing).
func TestAddrsAfterClose(t *testing.T) { backendtest.Run(t, testAddrsAfterClose) }

func testAddrsAfterClose(t *testing.T) {
	h := etNewHandler()
	inClose := make(chan string, 1)
	var others []net.Listener
	t.Cleanup(func() {
		for _, ln := range others {
			ln.Close()
		}
	})
	h.close = func(c *engine.Conn, err error) {
		for range 8 { // take the freed numbers, as a busy server would
			if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
				others = append(others, ln)
			}
		}
		a := c.LocalAddr()
		if a == nil {
			inClose <- "<nil>"
			return
		}
		inClose <- a.String()
	}
	e := etStart(t, h, engine.Options{})
	a, err := e.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skipf("Listen(tcp, 0.0.0.0:0) = %v", err)
	}
	peer := etDial(t, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: a.(*net.TCPAddr).Port})
	c := etOpened(t, h)
	want := peer.RemoteAddr().String()
	peer.Close()
	etClosed(t, h)
	if got := etRecv(t, inClose, "LocalAddr in OnClose"); got != want {
		t.Errorf("LocalAddr() in OnClose = %s, want %s", got, want)
	}
	if got := c.LocalAddr(); got == nil || got.String() != want {
		t.Errorf("LocalAddr() after OnClose = %v, want %s", got, want)
	}
	_, err = c.Write([]byte("x"))
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Source == nil || oe.Source.String() != want {
		t.Errorf("Write after close = %v, want a *net.OpError whose Source is %s", err, want)
	}
}

// TestAbort checks Conn.Abort: the connection closes at once although its
// peer never reads and output is queued (a Close would wait for that
// output for ever), OnClose reports nil, later Writes fail, and the peer
// sees a reset rather than an end of file that would pass the cut-off
// stream for a whole one.
func TestAbort(t *testing.T) { backendtest.Run(t, testAbort) }

func testAbort(t *testing.T) {
	backendtest.SkipUnderWine(t, backendtest.LingerFIN)
	h := etNewHandler()
	_, c, peer := etServe(t, h, engine.Options{Loops: 1, WriteHighWater: 8 << 20, MaxWriteBuffer: 8 << 20}, "tcp")
	etSmallReadBuffer(peer)
	etFill(t, c, 1<<20)
	if err := c.Abort(); err != nil {
		t.Fatalf("Abort() = %v", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after Abort = %v, want net.ErrClosed", err)
	}
	if ev := etClosed(t, h); ev.err != nil {
		t.Errorf("OnClose(%v) after Abort, want nil", ev.err)
	}
	peer.SetReadDeadline(time.Now().Add(etWait))
	_, err := io.Copy(io.Discard, peer)
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("the peer read to %v, want a connection reset", err)
	}
}

// TestConnAPIHidesLoop checks that Conn's methods are the public API
// only: none takes or returns a type of gale's internal packages (Complete
// used to take *loop.Loop and *poller.Completion). Backend, an alias that
// engine exports, is the exception: users name it backend.Kind.
func TestConnAPIHidesLoop(t *testing.T) {
	exported := reflect.TypeFor[backend.Kind]()
	for _, typ := range []reflect.Type{reflect.TypeOf(&engine.Conn{}), reflect.TypeOf(&engine.Engine{})} {
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			ft := m.Type
			var params []reflect.Type
			for j := range ft.NumIn() {
				params = append(params, ft.In(j))
			}
			for j := range ft.NumOut() {
				params = append(params, ft.Out(j))
			}
			for _, p := range params {
				for p.Kind() == reflect.Pointer || p.Kind() == reflect.Slice {
					p = p.Elem()
				}
				if p != exported && strings.Contains(p.PkgPath(), "/internal/") {
					t.Errorf("%v.%s uses %v, of an internal package", typ, m.Name, p)
				}
			}
		}
	}
}

// TestConnEngine checks Conn.Engine and Engine.Backend, which a hand-over
// to another owner (netconn.FromEngine) asks for the backend to use.
func TestConnEngine(t *testing.T) {
	for _, b := range []backend.Kind{backend.Auto, backend.Epoll, backend.Net} {
		if runtime.GOOS != "linux" && b == backend.Epoll {
			continue // no epoll here
		}
		h := etNewHandler()
		e, c, _ := etServe(t, h, engine.Options{Backend: b}, "tcp")
		if c.Engine() != e {
			t.Errorf("Conn.Engine() = %p, want %p", c.Engine(), e)
		}
		if got := e.Backend(); got != b {
			t.Errorf("Backend() = %v with Options.Backend %v, want the same", got, b)
		}
	}
}
