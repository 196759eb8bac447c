package engine_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"

	"github.com/galeio/gale/engine"
)

// etLog is an Options.ErrorLog's output, safe for the loops to write and
// the test to read.
type etLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *etLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *etLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// etPanicOptions gives an engine of one loop (every connection shares
// it) logging to a fresh etLog.
func etPanicOptions() (engine.Options, *etLog) {
	l := new(etLog)
	return engine.Options{Loops: 1, ErrorLog: log.New(l, "", 0)}, l
}

// etPanicked checks that err is a *PanicError with value want and a
// stack naming the test's callback.
func etPanicked(t *testing.T, err error, want string) {
	t.Helper()
	var pe *engine.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("OnClose(%v), want a *PanicError", err)
	}
	if pe.Value != want {
		t.Errorf("PanicError.Value = %v, want %q", pe.Value, want)
	}
	if !strings.Contains(string(pe.Stack), "panic_test.go") {
		t.Errorf("PanicError.Stack does not name the panicking callback:\n%s", pe.Stack)
	}
}

// etLogged waits until the log holds a report of a panic in cb with
// value v and a stack.
func etLogged(t *testing.T, l *etLog, cb, v string) {
	t.Helper()
	etWaitFor(t, "the panic's log", func() bool {
		s := l.String()
		return strings.Contains(s, "engine: panic in "+cb) && strings.Contains(s, ": "+v+"\n") &&
			strings.Contains(s, "goroutine ") && strings.Contains(s, "panic_test.go")
	})
}

// TestPanicData checks that a panic in OnData resets that connection
// only: OnClose gets a *PanicError, the log the value and the stack,
// and another connection of the same loop is served before and after.
func TestPanicData(t *testing.T) { backendtest.Run(t, testPanicData) }

func testPanicData(t *testing.T) {
	o, l := etPanicOptions()
	h := etEchoHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if bytes.Contains(in.Bytes(), []byte("panic")) {
			c.Write([]byte("partial")) // queued or sent: the reset may drop it
			panic("boom")
		}
		return etEcho(c, in)
	}
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	other := etDial(t, a)
	etOpened(t, h)
	bad := etDial(t, a)
	badc := etOpened(t, h)
	other.Write([]byte("before"))
	etExpect(t, other, "before")

	bad.Write([]byte("panic"))
	ev := etClosed(t, h)
	if ev.c != badc {
		t.Fatalf("OnClose for %v, want the panicking connection", ev.c.RemoteAddr())
	}
	etPanicked(t, ev.err, "boom")
	if got, want := ev.err.Error(), "engine: panic in OnData: boom"; got != want {
		t.Errorf("PanicError.Error() = %q, want %q", got, want)
	}
	etLogged(t, l, "OnData", "boom")
	bad.SetReadDeadline(time.Now().Add(etWait))
	if _, err := etReadUntilErr(bad); etIsTimeout(err) {
		t.Errorf("the panicking connection's peer read %v, want its end", err)
	}

	other.Write([]byte("after"))
	etExpect(t, other, "after")
}

// etReadUntilErr reads c until an error, which it returns.
func etReadUntilErr(c net.Conn) (int, error) {
	var b [512]byte
	n := 0
	for {
		k, err := c.Read(b[:])
		n += k
		if err != nil {
			return n, err
		}
	}
}

// TestPanicCallbacks checks that a panic in OnOpen, a function given to
// Execute, OnDeadline or OnEOF ends that connection with a *PanicError,
// and that one in OnClose is logged; the loop serves another connection
// after each.
func TestPanicCallbacks(t *testing.T) { backendtest.Run(t, testPanicCallbacks) }

func testPanicCallbacks(t *testing.T) {
	// Only the first connection panics: first holds it from its OnOpen.
	for _, tc := range []struct {
		name, cb string
		set      func(h *etHandler, first func(*engine.Conn) bool)
		poke     func(c *engine.Conn, peer net.Conn) // makes the callback run
	}{
		{"OnOpen", "OnOpen", func(h *etHandler, first func(*engine.Conn) bool) {
			h.open = func(c *engine.Conn) ([]byte, engine.Action) {
				if first(c) {
					panic("boom")
				}
				return nil, engine.None
			}
		}, nil},
		{"Execute", "an Execute function", nil, func(c *engine.Conn, _ net.Conn) {
			c.Execute(func(*engine.Conn) { panic("boom") })
		}},
		{"OnDeadline", "OnDeadline", func(h *etHandler, first func(*engine.Conn) bool) {
			h.deadline = func(*engine.Conn, error) engine.Action { panic("boom") }
		}, func(c *engine.Conn, _ net.Conn) {
			c.SetReadDeadline(time.Now().Add(time.Millisecond))
		}},
		{"OnClose", "OnClose", func(h *etHandler, first func(*engine.Conn) bool) {
			h.close = func(c *engine.Conn, err error) {
				if first(c) {
					panic("boom")
				}
			}
		}, func(_ *engine.Conn, peer net.Conn) { peer.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, l := etPanicOptions()
			h := etEchoHandler()
			var firstc atomic.Pointer[engine.Conn]
			first := func(c *engine.Conn) bool {
				firstc.CompareAndSwap(nil, c)
				return firstc.Load() == c
			}
			if tc.set != nil {
				tc.set(h, first)
			}
			e := etStart(t, h, o)
			a := etListen(t, e, "tcp")
			// A peer reset in OnOpen may see its connect fail.
			peer, err := net.DialTimeout("tcp", a.String(), etWait)
			if err != nil && tc.name != "OnOpen" {
				t.Fatalf("Dial(%v) = %v", a, err)
			}
			if err == nil {
				defer peer.Close()
			}
			c := etOpened(t, h)
			first(c)
			if tc.poke != nil {
				tc.poke(c, peer)
			}
			if tc.cb == "OnClose" {
				// The panic stops etHandler's report: the log says it.
				etLogged(t, l, tc.cb, "boom")
			} else {
				etPanicked(t, etClosed(t, h).err, "boom")
				etLogged(t, l, tc.cb, "boom")
			}

			other := etDial(t, a)
			etOpened(t, h)
			other.Write([]byte("ping"))
			etExpect(t, other, "ping")
		})
	}
}

// TestPanicEngineCallbacks checks that a panic in OnTick is logged and
// stops the ticks while connections are served, and that one in OnBoot
// is logged and shuts the engine down.
func TestPanicEngineCallbacks(t *testing.T) { backendtest.Run(t, testPanicEngineCallbacks) }

func testPanicEngineCallbacks(t *testing.T) {
	t.Run("OnTick", func(t *testing.T) {
		o, l := etPanicOptions()
		h := etEchoHandler()
		h.tick = func() (time.Duration, engine.Action) { panic("boom") }
		e := etStart(t, h, o)
		etLogged(t, l, "OnTick", "boom")
		peer := etDial(t, etListen(t, e, "tcp"))
		etOpened(t, h)
		peer.Write([]byte("ping"))
		etExpect(t, peer, "ping")
	})
	t.Run("OnBoot", func(t *testing.T) {
		o, l := etPanicOptions()
		h := etEchoHandler()
		h.boot = func(*engine.Engine) engine.Action { panic("boom") }
		e := etStart(t, h, o)
		etLogged(t, l, "OnBoot", "boom")
		etRecv(t, e.Done(), "the engine's end")
	})
}

// TestPanicHandshake checks that a tls.Config callback that panics
// (GetCertificate, on the handshake's goroutine) fails that handshake
// only: the client is refused, OnClose gets a *PanicError, and the next
// client is served.
func TestPanicHandshake(t *testing.T) { backendtest.Run(t, testPanicHandshake) }

func testPanicHandshake(t *testing.T) {
	o, l := etPanicOptions()
	h := etEchoHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if bytes.Contains(in.Bytes(), []byte("panic")) {
			panic("boom")
		}
		return etEcho(c, in)
	}
	cfg := tlstest.Get().ServerConfig()
	var n atomic.Int32
	cert := cfg.Certificates
	cfg.Certificates = nil
	cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
		if n.Add(1) == 1 {
			panic("boom")
		}
		return &cert[0], nil
	}
	_, a := etServeTLS(t, h, o, cfg)
	d := &net.Dialer{Timeout: etWait}
	if c, err := tls.DialWithDialer(d, "tcp", a.String(), tlstest.Get().ClientConfig()); err == nil {
		c.Close()
		t.Fatalf("the handshake whose GetCertificate panicked succeeded")
	}
	ev := etClosed(t, h)
	etPanicked(t, ev.err, "boom")
	if !strings.Contains(ev.err.Error(), "tls handshake") {
		t.Errorf("OnClose(%v), want the handshake's error", ev.err)
	}
	etLogged(t, l, "TLS handshake", "boom")

	c := etDialTLS(t, a, nil)
	etOpened(t, h)
	c.Write([]byte("ping"))
	etExpect(t, c, "ping")

	// OnData's panic on a TLS connection resets it as on any other.
	bad := etDialTLS(t, a, nil)
	etOpened(t, h)
	bad.Write([]byte("panic"))
	etPanicked(t, etClosed(t, h).err, "boom")
	etLogged(t, l, "OnData", "boom")
	c.Write([]byte("pong"))
	etExpect(t, c, "pong")
}

// TestCrashOnPanic checks, in a child process, that with
// Options.CrashOnPanic a panic in OnData crashes the program with the
// panic's report.
func TestCrashOnPanic(t *testing.T) {
	if os.Getenv("GALE_CRASH_CHILD") == "1" {
		h := etNewHandler()
		h.data = func(*engine.Conn, *engine.Inbound) engine.Action { panic("boom") }
		e := etStart(t, h, engine.Options{Loops: 1, CrashOnPanic: true})
		peer := etDial(t, etListen(t, e, "tcp"))
		peer.Write([]byte("x"))
		time.Sleep(etWait)
		t.Fatal("the panic did not crash the program")
	}
	if runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no child processes")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashOnPanic$", "-test.count=1")
	cmd.Env = append(os.Environ(), "GALE_CRASH_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the child passed, want a crash; output:\n%s", out)
	}
	if !strings.Contains(string(out), "panic: boom") || !strings.Contains(string(out), "panic_test.go") {
		t.Errorf("the child's output lacks the panic's report:\n%s", out)
	}
}

// etPanicky is an etHandler that is a HalfCloser, a LimitHandler and a
// Drainer, and panics in the one of those named by where.
type etPanicky struct {
	*etHandler
	where string
}

func (h etPanicky) OnEOF(*engine.Conn) engine.Action {
	if h.where == "OnEOF" {
		panic("boom")
	}
	return engine.Close
}

func (h etPanicky) OnLimit(*engine.Conn, error) {
	if h.where == "OnLimit" {
		panic("boom")
	}
}

func (h etPanicky) OnDrain(*engine.Conn) {
	if h.where == "OnDrain" {
		panic("boom")
	}
}

// TestPanicOptionalCallbacks checks that a panic in OnEOF, OnLimit or
// OnDrain ends that connection with a *PanicError.
func TestPanicOptionalCallbacks(t *testing.T) { backendtest.Run(t, testPanicOptionalCallbacks) }

func testPanicOptionalCallbacks(t *testing.T) {
	for _, where := range []string{"OnEOF", "OnLimit", "OnDrain"} {
		t.Run(where, func(t *testing.T) {
			o, l := etPanicOptions()
			o.MaxInputBuffer = 64
			h := etNewHandler()
			h.data = func(*engine.Conn, *engine.Inbound) engine.Action { return engine.None } // keeps all
			e, err := engine.New(etPanicky{h, where}, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { etStop(t, e) })
			if err := e.Start(); err != nil {
				t.Fatal(err)
			}
			peer := etDial(t, etListen(t, e, "tcp"))
			etOpened(t, h)
			switch where {
			case "OnEOF":
				peer.(*net.TCPConn).CloseWrite()
			case "OnLimit":
				peer.Write(make([]byte, 100))
			case "OnDrain":
				go e.Shutdown(context.Background())
			}
			etPanicked(t, etClosed(t, h).err, "boom")
			etLogged(t, l, where, "boom")
		})
	}
}

// TestPanicDatagram checks that a panic in a UDP socket's OnData loses
// that datagram only: the socket, which serves every peer, answers the
// next one.
func TestPanicDatagram(t *testing.T) { backendtest.Run(t, testPanicDatagram) }

func testPanicDatagram(t *testing.T) {
	o, l := etPanicOptions()
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if string(in.Bytes()) == "panic" {
			panic("boom")
		}
		return etEcho(c, in)
	}
	_, _, a := etUDP(t, h, o)
	p := etDialUDP(t, a)
	p.Write([]byte("panic"))
	etLogged(t, l, "OnData", "boom")
	if !strings.Contains(l.String(), "serving "+p.LocalAddr().String()) {
		t.Errorf("log = %q, want the datagram's source %v", l.String(), p.LocalAddr())
	}
	p.Write([]byte("ping"))
	p.SetReadDeadline(time.Now().Add(etWait))
	var b [64]byte
	if n, err := p.Read(b[:]); err != nil || string(b[:n]) != "ping" {
		t.Fatalf("reply = %q, %v, want %q", b[:n], err, "ping")
	}
	etNoEvent(t, h.closed, "OnClose")
}
