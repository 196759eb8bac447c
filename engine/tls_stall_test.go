package engine_test

// Stalled handshakes (issue 31): connections that start a TLS handshake
// and go silent, more of them than Options.HandshakeWorkers, must not
// delay a well-behaved client's handshake, on either side of the
// connection.

import (
	"context"
	"crypto/tls"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

const (
	// stallWorkers is the tests' HandshakeWorkers, and stallEach the
	// stalled handshakes of each kind, many more than the workers.
	stallWorkers, stallEach = 8, 200
	// stallBound bounds a well-behaved handshake beside the stalled ones,
	// under -race on a machine other tests load: before the fix it took
	// the whole HandshakeTimeout.
	stallBound = 2 * time.Second
	// stallTimeout is the tests' HandshakeTimeout, far beyond their end,
	// so that no stalled handshake is cut short while they measure.
	stallTimeout = 30 * time.Second
)

// stallPromise is a handshake record, whole, that holds only the header
// of the ClientHello it announces (256 bytes): its first record is whole,
// its first message is not.
var stallPromise = []byte{22, 3, 1, 0, 4, 1, 0, 1, 0}

// stallDial opens n connections to a and writes first on each. They are
// closed at cleanup.
func stallDial(t testing.TB, a string, n int, first []byte) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range n {
		c, err := net.DialTimeout("tcp", a, etWait)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := c.Write(first); err != nil {
			t.Fatalf("write on %d: %v", i, err)
		}
	}
	return conns
}

// stallAnswered waits, until deadline, for the server's first byte on
// each of conns, and returns how many got one.
func stallAnswered(conns []net.Conn, deadline time.Time) int {
	n := 0
	for _, c := range conns {
		c.SetReadDeadline(deadline)
		if k, _ := c.Read(make([]byte, 1)); k == 1 {
			n++
		}
	}
	return n
}

// stallGoodHandshake handshakes with a as a crypto/tls client, bounded
// by stallBound, and returns how long it took.
func stallGoodHandshake(a string) (time.Duration, error) {
	return stallGoodHandshakeWithin(a, stallBound)
}

// stallGoodHandshakeWithin is stallGoodHandshake bounded by d.
func stallGoodHandshakeWithin(a string, d time.Duration) (time.Duration, error) {
	start := time.Now()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: d}, "tcp", a, tlstest.Get().ClientConfig())
	took := time.Since(start)
	if err == nil {
		c.Close()
	}
	return took, err
}

// TestTLSStalledHandshakes opens, against ListenTLS, stallEach
// connections whose ClientHello never comes whole (stallPromise) and
// stallEach that send a whole ClientHello and then nothing, then has a
// well-behaved client handshake: it must be done within stallBound, not
// after HandshakeTimeout. The first kind costs the server no goroutine,
// the second one goroutine each (as net/http's does).
func TestTLSStalledHandshakes(t *testing.T) { backendtest.Run(t, testTLSStalledHandshakes) }

func testTLSStalledHandshakes(t *testing.T) {
	h := etEchoHandler()
	e, a := etServeTLS(t, h, engine.Options{HandshakeWorkers: stallWorkers, HandshakeTimeout: stallTimeout}, nil)
	hello := clientHello(t)
	base := runtime.NumGoroutine()
	in := e.Stats().Total().BytesIn

	stallDial(t, a.String(), stallEach, stallPromise)
	etWaitFor(t, "the promised ClientHellos' bytes received", func() bool {
		return e.Stats().Total().BytesIn >= in+uint64(stallEach*len(stallPromise))
	})
	// The net backend has a goroutine per connection anyway.
	if g := runtime.NumGoroutine(); g > base+2 && !backendtest.OnNet() {
		t.Errorf("%d goroutines with %d ClientHellos promised and not sent, want at most %d (%d before): waiting for a ClientHello holds no goroutine",
			g, stallEach, base+2, base)
	}

	hellos := stallDial(t, a.String(), stallEach, hello)
	// The server answers each, then waits for a Finished: the new
	// client's handshake below must not queue behind their computing.
	answered := stallAnswered(hellos, time.Now().Add(etWait))
	for i := range 3 {
		took, err := stallGoodHandshake(a.String())
		if err != nil {
			t.Fatalf("handshake %d beside %d stalled ones of each kind (HandshakeWorkers %d): %v after %v, want done within %v",
				i, stallEach, stallWorkers, err, took.Round(time.Millisecond), stallBound)
		}
		t.Logf("handshake %d beside %d stalled ones of each kind: %v", i, stallEach, took.Round(time.Microsecond))
	}
	if answered != stallEach {
		t.Errorf("%d of %d whole ClientHellos answered within %v, want all", answered, stallEach, etWait)
	}
	if g := runtime.NumGoroutine(); g > base+stallEach+2 && !backendtest.OnNet() {
		t.Errorf("%d goroutines with %d handshakes waiting for their client's Finished, want at most %d (%d before)",
			g, stallEach, base+stallEach+2, base)
	}
}

// stallSilent accepts connections and reads what they send, answering
// nothing, until the test ends.
type stallSilent struct {
	ln    net.Listener
	heard atomic.Int32 // connections that sent a byte
}

func newStallSilent(t testing.TB) *stallSilent {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallSilent{ln: ln}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				buf := make([]byte, 4096)
				c.SetReadDeadline(time.Now().Add(stallTimeout))
				if n, _ := c.Read(buf); n > 0 {
					s.heard.Add(1)
				}
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	})
	return s
}

// TestTLSDialStalled starts more DialTLS handshakes with a server that
// never answers than HandshakeWorkers, then a DialTLS to a server that
// does: it must be done within stallBound.
func TestTLSDialStalled(t *testing.T) { backendtest.Run(t, testTLSDialStalled) }

func testTLSDialStalled(t *testing.T) {
	silent := newStallSilent(t)
	good := etGoEchoServer(t, tlstest.Get().ServerConfig())
	e := etStart(t, etNewHandler(), engine.Options{HandshakeWorkers: stallWorkers, HandshakeTimeout: stallTimeout})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	const n = stallWorkers + 8
	for range n {
		wg.Go(func() {
			if c, err := e.DialTLSContext(ctx, "tcp", silent.ln.Addr().String(), tlstest.Get().ClientConfig()); err == nil {
				t.Errorf("DialTLS to a server that never answers succeeded")
				c.Close()
			}
		})
	}
	deadline := time.Now().Add(etWait)
	for silent.heard.Load() < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	heard := silent.heard.Load()

	for i := range 3 {
		gctx, gcancel := context.WithTimeout(context.Background(), stallBound)
		start := time.Now()
		c, err := e.DialTLSContext(gctx, "tcp", good.Addr().String(), tlstest.Get().ClientConfig())
		took := time.Since(start)
		gcancel()
		if err != nil {
			t.Fatalf("DialTLS %d beside %d stalled ones (HandshakeWorkers %d): %v after %v, want done within %v",
				i, n, stallWorkers, err, took.Round(time.Millisecond), stallBound)
		}
		c.Close()
		t.Logf("DialTLS %d beside %d stalled ones: %v", i, n, took.Round(time.Microsecond))
	}
	if heard != n {
		t.Errorf("%d of %d DialTLS sent their ClientHello within %v, want all", heard, n, etWait)
	}
}

// TestTLSHandshakeWorkersBound: HandshakeWorkers still bounds the
// handshakes that compute at once. Each server handshake blocks in
// GetConfigForClient, which counts as computing, until the test lets it
// go: of more handshakes than workers, exactly HandshakeWorkers enter it,
// the others wait for a slot with no goroutine, and all end once let go.
// A client whose handshake ended before is served meanwhile.
func TestTLSHandshakeWorkersBound(t *testing.T) { backendtest.Run(t, testTLSHandshakeWorkersBound) }

func testTLSHandshakeWorkersBound(t *testing.T) {
	const workers, n = 4, 12
	var inside, entered atomic.Int32
	var blocking atomic.Bool // off for the established client's handshake
	gate := make(chan struct{})
	cfg := tlstest.Get().ServerConfig()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		if !blocking.Load() {
			return nil, nil
		}
		entered.Add(1)
		if k := inside.Add(1); k > workers {
			t.Errorf("%d handshakes computing at once, want at most HandshakeWorkers %d", k, workers)
		}
		defer inside.Add(-1)
		select {
		case <-gate:
		case <-time.After(etWait):
			t.Errorf("GetConfigForClient not let go within %v", etWait)
		}
		return nil, nil
	}
	_, a := etServeTLS(t, etEchoHandler(), engine.Options{HandshakeWorkers: workers, HandshakeTimeout: stallTimeout}, cfg)
	good := etDialTLS(t, a, nil)
	etEchoCheck(t, good, []byte("before"))
	blocking.Store(true)
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := stallGoodHandshakeWithin(a.String(), etWait)
			errs <- err
		}()
	}
	etWaitFor(t, "HandshakeWorkers handshakes computing", func() bool { return entered.Load() == workers })
	time.Sleep(50 * time.Millisecond) // room for a handshake past the bound to show
	if k := entered.Load(); k != workers {
		t.Errorf("%d handshakes entered GetConfigForClient while %d blocked in it, want %d", k, workers, workers)
	}
	etEchoCheck(t, good, []byte("while every worker computes"))
	close(gate)
	for range n {
		if err := etRecv(t, errs, "a handshake's end"); err != nil {
			t.Errorf("handshake: %v", err)
		}
	}
}
