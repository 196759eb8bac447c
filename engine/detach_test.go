package engine_test

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
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
// in the loop's read buffer, so a copy) and empties the Inbound. On
// io_uring, where the kernel receives ahead of OnData, it must refuse
// with ErrDetachBusy instead, and leave the connection served.
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
		if err != nil {
			return etEcho(c, in)
		}
		return engine.None
	}
	e, _, peer := etServe(t, h, engine.Options{}, "tcp")
	peer.Write([]byte("hello world"))
	r := etRecv(t, got, "DetachInput from OnData")
	if etReadsAhead(e) {
		if !errors.Is(r.err, engine.ErrDetachBusy) {
			t.Fatalf("DetachInput() from OnData on io_uring = %v, want ErrDetachBusy", r.err)
		}
		etExpect(t, peer, "world")
		return
	}
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

// TestAdoptInput checks that AdoptInput's input reaches OnData right after
// OnOpen though the peer sends nothing, that the engine keeps its own copy,
// and that what the peer sends later follows it.
func TestAdoptInput(t *testing.T) { backendtest.Run(t, testAdoptInput) }

func testAdoptInput(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		events := make(chan string, 16)
		h := etNewHandler()
		h.open = func(*engine.Conn) ([]byte, engine.Action) {
			events <- "open"
			return nil, engine.None
		}
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			events <- "data " + string(in.Bytes())
			c.Write(in.Bytes())
			in.Discard(in.Len())
			return engine.None
		}
		e := etStart(t, h, engine.Options{})
		peer, nc := etAccepted(t, network)
		input := []byte("prefix")
		c, err := e.AdoptInput(nc, input)
		if err != nil {
			t.Fatalf("AdoptInput = %v", err)
		}
		copy(input, "XXXXXX") // the engine's copy must not change
		for _, want := range []string{"open", "data prefix"} {
			if ev := etRecv(t, events, want); ev != want {
				t.Fatalf("event %q, want %q", ev, want)
			}
		}
		etExpect(t, peer, "prefix")
		peer.Write([]byte("more"))
		if ev := etRecv(t, events, "OnData"); ev != "data more" {
			t.Fatalf("event %q, want %q", ev, "data more")
		}
		etExpect(t, peer, "more")
		c.Close()
		etClosed(t, h)
	})
}

// TestAdoptInputHeld checks that input OnData leaves unconsumed is held,
// and presented again followed by what arrives next, like any other.
func TestAdoptInputHeld(t *testing.T) { backendtest.Run(t, testAdoptInputHeld) }

func testAdoptInputHeld(t *testing.T) {
	got := make(chan string, 16)
	h := etNewHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		if b, err := in.ReadUntil('\n'); err == nil {
			got <- string(b)
		}
		return engine.None
	}
	e := etStart(t, h, engine.Options{})
	peer, nc := etAccepted(t, "tcp")
	if _, err := e.AdoptInput(nc, []byte("a line ")); err != nil {
		t.Fatalf("AdoptInput = %v", err)
	}
	etOpened(t, h)
	peer.Write([]byte("in two parts\n"))
	if s := etRecv(t, got, "the line"); s != "a line in two parts\n" {
		t.Fatalf("OnData's line = %q, want the input then the peer's bytes", s)
	}
}

// TestAdoptInputOverLimit checks that input over MaxInputBuffer that
// OnData leaves unconsumed closes the connection with ErrInputBufferFull,
// as it would had it been received.
func TestAdoptInputOverLimit(t *testing.T) { backendtest.Run(t, testAdoptInputOverLimit) }

func testAdoptInputOverLimit(t *testing.T) {
	h := etNewHandler()
	h.data = func(*engine.Conn, *engine.Inbound) engine.Action { return engine.None }
	e := etStart(t, h, engine.Options{MaxInputBuffer: 4})
	_, nc := etAccepted(t, "tcp")
	c, err := e.AdoptInput(nc, []byte("too long"))
	if err != nil {
		t.Fatalf("AdoptInput = %v", err)
	}
	if ev := etClosed(t, h); ev.c != c || !errors.Is(ev.err, engine.ErrInputBufferFull) {
		t.Fatalf("OnClose(%p, %v), want (%p, ErrInputBufferFull)", ev.c, ev.err, c)
	}
}

// TestDetachAdoptInput moves a connection from one engine to another
// with the input the first left unconsumed; the second's OnData gets it
// first, then the peer's next bytes.
func TestDetachAdoptInput(t *testing.T) { backendtest.Run(t, testDetachAdoptInput) }

func testDetachAdoptInput(t *testing.T) {
	h1, held := etHoldHandler(0)
	_, c, peer := etServe(t, h1, engine.Options{}, "unix")
	peer.Write([]byte("12345"))
	etHolding(t, held, 5)
	nc, input, err := c.DetachInput()
	if err != nil {
		t.Fatalf("DetachInput() = %v", err)
	}
	h2 := etEchoHandler()
	e2 := etStart(t, h2, engine.Options{})
	if _, err := e2.AdoptInput(nc, input); err != nil {
		t.Fatalf("AdoptInput = %v", err)
	}
	peer.Write([]byte("67890"))
	etExpect(t, peer, "1234567890")
}

// etAccepted returns both ends of a connection made through a standard
// listener on network: the dialing peer (closed at cleanup) and the
// accepted net.Conn.
func etAccepted(t *testing.T, network string) (peer, accepted net.Conn) {
	t.Helper()
	ln, err := net.Listen(network, etAddr(t, network))
	if err != nil {
		backendtest.SkipMissing(t, err)
		t.Fatal(err)
	}
	defer ln.Close()
	peer = etDial(t, ln.Addr())
	accepted, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { accepted.Close() })
	return peer, accepted
}

// TestDetachInputStreaming detaches a connection whose peer streams
// without pause: what OnData consumed, the input DetachInput returns and
// what the net.Conn reads then must make up the stream, with no byte
// lost, repeated or reordered. On io_uring the backend receives ahead of
// the engine, so this checks that the hand-over collects those bytes too.
func TestDetachInputStreaming(t *testing.T) { backendtest.Run(t, testDetachInputStreaming) }

func testDetachInputStreaming(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		const total, frame = 8 << 20, 1000
		var mu sync.Mutex
		var got []byte
		h := etNewHandler()
		h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
			b, _ := in.Next(in.Len() / frame * frame)
			mu.Lock()
			got = append(got, b...)
			mu.Unlock()
			return engine.None
		}
		_, c, peer := etServe(t, h, engine.Options{}, network)
		go peer.Write(etPattern(total))
		etWaitFor(t, "OnData past 1 MiB", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(got) >= 1<<20
		})
		nc, input, err := c.DetachInput()
		if err != nil {
			t.Fatalf("DetachInput() = %v", err)
		}
		defer nc.Close()
		mu.Lock()
		all := append(append([]byte(nil), got...), input...)
		mu.Unlock()
		consumed := len(all)
		all = append(all, etReadFull(t, nc, total-len(all))...)
		if i := etCheckPattern(all); i >= 0 {
			t.Fatalf("byte %d of the stream is wrong (OnData consumed %d, input %d): lost, repeated or reordered in the hand-over", i, consumed-len(input), len(input))
		}
	})
}

// TestDetachInputFromOnDataStreaming detaches from OnData while the peer
// streams without pause: the input DetachInput returns and what the
// net.Conn reads then must make up the stream. (On io_uring the kernel
// would have taken more meanwhile: there DetachInput must refuse.)
func TestDetachInputFromOnDataStreaming(t *testing.T) {
	backendtest.Run(t, testDetachInputFromOnDataStreaming)
}

func testDetachInputFromOnDataStreaming(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		const total = 8 << 20
		type result struct {
			nc    net.Conn
			input []byte
			err   error
		}
		got := make(chan result, 1)
		var consumed int
		tried := false
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			if tried {
				in.Discard(in.Len())
				return engine.None
			}
			consumed += in.Discard(min(in.Len(), 100<<10-consumed))
			if consumed == 100<<10 {
				tried = true
				nc, input, err := c.DetachInput()
				got <- result{nc, input, err}
			}
			return engine.None
		}
		e, _, peer := etServe(t, h, engine.Options{}, network)
		go func() {
			peer.Write(etPattern(total))
		}()
		r := etRecv(t, got, "DetachInput from OnData")
		if etReadsAhead(e) && errors.Is(r.err, engine.ErrDetachBusy) {
			peer.Close() // ends the write
			return
		}
		if r.err != nil {
			t.Fatalf("DetachInput() from OnData = %v", r.err)
		}
		defer r.nc.Close()
		all := append(append([]byte(nil), etPattern(consumed)...), r.input...)
		all = append(all, etReadFull(t, r.nc, total-len(all))...)
		if i := etCheckPattern(all); i >= 0 {
			t.Fatalf("byte %d of the stream is wrong (OnData consumed %d, input %d): lost, repeated or reordered in the hand-over", i, consumed, len(r.input))
		}
	})
}

// etReadsAhead reports whether e's loops run io_uring, where the kernel
// receives for a connection between its OnData calls.
func etReadsAhead(e *engine.Engine) bool {
	return e.Stats().Loops[0].Backend == backend.IOURing
}

// TestDetachInputPaused detaches a connection whose reading backpressure
// stopped (its peer sends without reading the echo): bytes the backend
// took ahead meanwhile (io_uring's multishot goes on for a while) must
// reach OnData or the input, and with the echo written first and what
// the net.Conn reads then, make up the stream.
func TestDetachInputPaused(t *testing.T) { backendtest.Run(t, testDetachInputPaused) }

func testDetachInputPaused(t *testing.T) {
	const total = 4 << 20
	var echoed atomic.Int64
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if n, err := c.Write(in.Bytes()); err == nil { // a failed Write leaves the bytes for the input
			echoed.Add(int64(n))
			in.Discard(n)
		}
		return engine.None
	}
	e, c, peer := etServe(t, h, engine.Options{WriteHighWater: 64 << 10}, "unix")
	go peer.Write(etPattern(total))
	etWaitFor(t, "reading paused", func() bool { return e.Stats().Total().Paused == 1 })
	type result struct {
		nc    net.Conn
		input []byte
		err   error
	}
	res := make(chan result, 1)
	go func() {
		nc, input, err := c.DetachInput()
		res <- result{nc, input, err}
	}()
	// The peer reads the echo, so the queued output drains and the
	// hand-over can end; then all of it, now that the count is final.
	var echo []byte
	buf := make([]byte, 64<<10)
	var r *result
	deadline := time.Now().Add(etWait)
	for r == nil || len(echo) < int(echoed.Load()) {
		if time.Now().After(deadline) {
			t.Fatalf("the echo: %d bytes of %d, DetachInput returned: %v", len(echo), echoed.Load(), r != nil)
		}
		if r == nil {
			select {
			case v := <-res:
				r = &v
			default:
			}
		}
		peer.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		n, _ := peer.Read(buf)
		echo = append(echo, buf[:n]...)
	}
	if r.err != nil {
		t.Fatalf("DetachInput() = %v", r.err)
	}
	defer r.nc.Close()
	all := append(echo, r.input...)
	all = append(all, etReadFull(t, r.nc, total-len(all))...)
	if i := etCheckPattern(all); i >= 0 {
		t.Fatalf("byte %d of the stream is wrong (echoed %d, input %d): lost, repeated or reordered in the hand-over", i, len(echo), len(r.input))
	}
}
