package engine_test

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestDeadlineStats checks that LoopStats.Deadlines counts each read and
// write deadline that passed, once.
func TestDeadlineStats(t *testing.T) { backendtest.Run(t, testDeadlineStats) }

func testDeadlineStats(t *testing.T) {
	h := etEchoHandler()
	e, clk, c, _ := etClocked(t, h, engine.Options{Loops: 1}, "tcp")
	c.SetReadDeadline(clk.Now().Add(time.Second))
	etStep(e, clk, time.Second)
	etRecv(t, h.deadlines, "OnDeadline")
	got := e.Stats().Total().Deadlines
	if want := (engine.DeadlineStats{Read: 1}); got != want {
		t.Errorf("Deadlines = %+v after a read deadline, want %+v", got, want)
	}
}

// TestErrorStats checks that a peer's reset counts in Errors.Reset, and
// a clean close nowhere.
func TestErrorStats(t *testing.T) { backendtest.Run(t, testErrorStats) }

func testErrorStats(t *testing.T) {
	backendtest.SkipUnderWine(t, backendtest.LingerFIN)
	h := etEchoHandler()
	e, _, peer := etServe(t, h, engine.Options{Loops: 1}, "tcp")
	etEchoes(t, peer, "hello")
	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	etClosed(t, h)
	if got, want := e.Stats().Total().Errors, (engine.ErrorStats{Reset: 1}); got != want {
		t.Errorf("Errors = %+v after a reset, want %+v", got, want)
	}
	peer = etDial(t, etListen(t, e, "tcp"))
	etOpened(t, h)
	peer.Close()
	etClosed(t, h)
	if got, want := e.Stats().Total().Errors, (engine.ErrorStats{Reset: 1}); got != want {
		t.Errorf("Errors = %+v after a clean end, want %+v", got, want)
	}
}

// TestHandshakeStats checks the gauge of TLS handshakes in progress, and
// Errors.TLSHandshake for one cut short and one the client refused.
func TestHandshakeStats(t *testing.T) { backendtest.Run(t, testHandshakeStats) }

func testHandshakeStats(t *testing.T) {
	h := etEchoHandler()
	e, a := etServeTLS(t, h, engine.Options{Loops: 1}, nil)
	silent := etDial(t, a) // no ClientHello: its handshake waits on the loop
	etWaitFor(t, "Handshakes = 1", func() bool { return e.Stats().Total().Handshakes == 1 })
	silent.Close()
	etClosed(t, h)
	if s := e.Stats().Total(); s.Handshakes != 0 || s.Errors.TLSHandshake != 1 {
		t.Errorf("once the silent client left: Handshakes = %d, Errors = %+v, want 0 and one TLSHandshake (cut short)", s.Handshakes, s.Errors)
	}
	d := &net.Dialer{Timeout: etWait}
	if c, err := tls.DialWithDialer(d, "tcp", a.String(), &tls.Config{ServerName: "untrusted"}); err == nil {
		c.Close()
		t.Fatal("a client that trusts no CA finished its handshake")
	}
	etClosed(t, h)
	s := e.Stats().Total()
	// The client's alert may come with a reset of the socket, which the
	// server may meet first.
	if er := s.Errors; s.Handshakes != 0 || er.TLSHandshake < 1 || er.TLSHandshake+er.Reset+er.Read != 2 || er.Write+er.Other != 0 {
		t.Errorf("after a refused certificate: Handshakes = %d, Errors = %+v, want 0 and two failures, one TLSHandshake at least", s.Handshakes, s.Errors)
	}
}
