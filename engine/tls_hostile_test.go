package engine_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// clientHello returns the first record a crypto/tls client sends: a
// ClientHello, whole.
func clientHello(t testing.TB) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, tlstest.Get().ClientConfig()).Handshake()
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(b, hdr); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	return append(hdr, body...)
}

// etClosedWith waits for the next OnClose and checks that its error
// says want.
func etClosedWith(t testing.TB, h *etHandler, want string) error {
	t.Helper()
	ev := etClosed(t, h)
	if ev.err == nil || !strings.Contains(ev.err.Error(), want) {
		t.Errorf("OnClose error %v, want one saying %q", ev.err, want)
	}
	return ev.err
}

// hostileServer serves TLS echo and keeps one established client, which
// each hostile case checks still echoes afterwards: nothing but the
// hostile connection is disturbed.
func hostileServer(t *testing.T, o engine.Options) (*etHandler, net.Addr, *tls.Conn) {
	h := etEchoHandler()
	_, a := etServeTLS(t, h, o, nil)
	good := etDialTLS(t, a, nil)
	etOpened(t, h)
	etEchoCheck(t, good, []byte("before"))
	return h, a, good
}

func TestTLSHostile(t *testing.T) { backendtest.Run(t, testTLSHostile) }

func testTLSHostile(t *testing.T) {
	t.Run("garbage instead of a ClientHello", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{})
		c := etDial(t, a)
		c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
		etClosedWith(t, h, "does not look like a TLS handshake")
		etNoEvent(t, h.opened, "OnOpen")
		etEchoCheck(t, good, []byte("after"))
	})
	t.Run("truncated ClientHello", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{})
		c := etDial(t, a)
		c.Write(clientHello(t)[:40])
		c.(*net.TCPConn).CloseWrite()
		err := etClosedWith(t, h, "tls handshake")
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("OnClose: %v, want io.ErrUnexpectedEOF", err)
		}
		etEchoCheck(t, good, []byte("after"))
	})
	t.Run("oversized record in the handshake", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{})
		c := etDial(t, a)
		c.Write([]byte{22, 3, 1, 0xff, 0xff})
		etClosedWith(t, h, "tls")
		etEchoCheck(t, good, []byte("after"))
	})
	t.Run("oversized record after the handshake", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{})
		c := etDialTLS(t, a, nil)
		etOpened(t, h)
		c.NetConn().Write([]byte{23, 3, 3, 0x50, 0x00})
		etClosedWith(t, h, "oversized record")
		// crypto/tls's alert reached the client.
		if _, err := c.Read(make([]byte, 1)); err == nil || !strings.Contains(err.Error(), "record overflow") {
			t.Errorf("client Read after its oversized record: %v, want the record_overflow alert", err)
		}
		etEchoCheck(t, good, []byte("after"))
	})
	t.Run("corrupted record", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{})
		c := etDialTLS(t, a, nil)
		etOpened(t, h)
		c.NetConn().Write([]byte{23, 3, 3, 0, 30, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
			16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30})
		etClosedWith(t, h, "bad record MAC")
		etEchoCheck(t, good, []byte("after"))
	})
	t.Run("stalled before the ClientHello is whole", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{HandshakeTimeout: 300 * time.Millisecond})
		c := etDial(t, a)
		c.Write(clientHello(t)[:100])
		if err := etClosedWith(t, h, "handshake timeout"); !errors.Is(err, engine.ErrHandshakeTimeout) {
			t.Errorf("OnClose: %v, want ErrHandshakeTimeout", err)
		}
		etEchoCheck(t, good, []byte("after"))
	})
	t.Run("stalled after the ClientHello", func(t *testing.T) {
		h, a, good := hostileServer(t, engine.Options{HandshakeTimeout: 300 * time.Millisecond})
		c := etDial(t, a)
		c.Write(clientHello(t)) // a worker answers, then waits for a Finished that never comes
		if err := etClosedWith(t, h, "handshake timeout"); !errors.Is(err, engine.ErrHandshakeTimeout) {
			t.Errorf("OnClose: %v, want ErrHandshakeTimeout", err)
		}
		etEchoCheck(t, good, []byte("after"))
	})
}

// TestTLSSlowHandshakeFlood opens 5,000 connections that start a
// handshake and stall, half before their ClientHello is whole and half
// after it, while established connections keep echoing: the echoes go
// on, a handshake goroutine exists only for a whole ClientHello (it
// waits for the client's Finished, as net/http's would, holding no
// worker), and every stalled connection ends with ErrHandshakeTimeout,
// its goroutine with it.
func TestTLSSlowHandshakeFlood(t *testing.T) {
	backendtest.SkipOnNet(t, "a goroutine waits on each connection's pending read")
	const (
		slow    = 5000
		workers = 8
		timeout = 3 * time.Second
	)
	hello := clientHello(t)
	h := etNewHandler()
	h.data = etEcho
	var mu sync.Mutex
	timeouts, others := 0, []error{}
	allClosed := make(chan struct{})
	h.close = func(c *engine.Conn, err error) {
		mu.Lock()
		defer mu.Unlock()
		if !errors.Is(err, engine.ErrHandshakeTimeout) {
			others = append(others, err)
			return
		}
		if timeouts++; timeouts == slow {
			close(allClosed)
		}
	}
	h.closed = make(chan etEvent, slow+16)
	_, a := etServeTLS(t, h, engine.Options{HandshakeWorkers: workers, HandshakeTimeout: timeout}, nil)
	var good []*tls.Conn
	for range 4 {
		good = append(good, etDialTLS(t, a, nil))
	}
	base := runtime.NumGoroutine()

	// The flood, while the established connections echo.
	stop := make(chan struct{})
	echoes := make(chan int, len(good))
	for _, g := range good {
		go func() {
			n := 0
			defer func() { echoes <- n }()
			msg := bytes.Repeat([]byte("e"), 1024)
			buf := make([]byte, len(msg))
			for {
				select {
				case <-stop:
					return
				default:
				}
				g.SetDeadline(time.Now().Add(etWait))
				if _, err := g.Write(msg); err != nil {
					return
				}
				if _, err := io.ReadFull(g, buf); err != nil {
					return
				}
				n++
			}
		}()
	}
	conns := make([]net.Conn, 0, slow)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	maxG := 0
	for i := range slow {
		c, err := net.Dial("tcp", a.String())
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%2 == 0 {
			c.Write(hello)
		} else {
			c.Write(hello[:len(hello)/2])
		}
		if i%100 == 0 {
			maxG = max(maxG, runtime.NumGoroutine())
		}
	}
	select {
	case <-allClosed:
	case <-time.After(timeout + 2*etWait):
		mu.Lock()
		t.Fatalf("%d of %d stalled handshakes timed out", timeouts, slow)
	}
	// The timeout, not the clients' close, ends the handshake goroutines:
	// the echo goroutines are left.
	etWaitFor(t, "the stalled handshakes' goroutines ended", func() bool {
		return runtime.NumGoroutine() <= base+len(good)+2
	})
	close(stop)
	total := 0
	for range good {
		total += <-echoes
	}
	mu.Lock()
	defer mu.Unlock()
	if len(others) > 0 { // the established connections are still open
		t.Errorf("%d connections closed with another error, first %v", len(others), others[0])
	}
	if total == 0 {
		t.Errorf("the established connections echoed nothing during the flood")
	}
	// The echo goroutines of this test, and a handshake goroutine per
	// whole ClientHello.
	if limit := base + len(good) + slow/2 + 4; maxG > limit {
		t.Errorf("%d goroutines during the flood, want at most %d (%d whole ClientHellos)", maxG, limit, slow/2)
	}
	t.Logf("%d stalled handshakes timed out; %d echoes of 1 KiB meanwhile; at most %d goroutines (%d before)",
		timeouts, total, maxG, base)
	for _, g := range good {
		etEchoCheck(t, g, []byte("after the flood"))
	}
}

// TestTLSIdleTimeoutInHandshake: an idle timeout shorter than the
// handshake timeout ends a stalled handshake with ErrIdleTimeout, and the
// handler, which never saw the connection open, gets no OnDeadline.
func TestTLSIdleTimeoutInHandshake(t *testing.T) {
	h := etEchoHandler()
	h.deadline = func(c *engine.Conn, err error) engine.Action {
		t.Errorf("OnDeadline(%v) for a connection still in its handshake", err)
		return engine.None
	}
	_, a := etServeTLS(t, h, engine.Options{IdleTimeout: 200 * time.Millisecond}, nil)
	c := etDial(t, a)
	c.Write(clientHello(t)[:10])
	if err := etClosedWith(t, h, "idle"); !errors.Is(err, engine.ErrIdleTimeout) {
		t.Errorf("OnClose: %v, want ErrIdleTimeout", err)
	}
}
