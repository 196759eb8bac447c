package engine_test

// A peer that resets its connection (RST, through SO_LINGER 0) while the
// engine reads from it or has a large write in flight to it: that
// connection ends with the reset, its descriptor and queued output are
// released, and the loop goes on serving the others. (TestPeerReset
// checks the error and the queue with a 2 MiB write on TCP and Unix
// sockets.)

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// etResetBig is the write in flight when the peer resets: far more than
// the socket buffers hold, so most of it is queued.
const etResetBig = 32 << 20

// TestResetDuringRead checks a reset while the engine waits to read: the
// connection closes with a *net.OpError of "read" matching ECONNRESET,
// its descriptor is closed, and the other connections of the same loop
// echo before and after.
func TestResetDuringRead(t *testing.T) { backendtest.Run(t, testResetDuringRead) }

func testResetDuringRead(t *testing.T) {
	backendtest.SkipUnderWine(t, backendtest.LingerFIN)
	ev := etResetCase(t, func(t *testing.T, c *engine.Conn) {})
	var oe *net.OpError
	if !errors.Is(ev.err, syscall.ECONNRESET) || !errors.As(ev.err, &oe) || oe.Op != "read" {
		t.Errorf("OnClose(err = %v) of a conn reset while reading, want a read's ECONNRESET", ev.err)
	}
}

// TestResetDuringLargeWrite checks a reset while 32 MiB, which the peer
// never read, are being written: the connection closes with ECONNRESET
// or EPIPE, its 32 MiB of queued output are released, its descriptor is
// closed, Write fails afterwards, and the other connections of the same
// loop echo while the write is stuck and after the reset.
func TestResetDuringLargeWrite(t *testing.T) { backendtest.Run(t, testResetDuringLargeWrite) }

func testResetDuringLargeWrite(t *testing.T) {
	etResetCase(t, func(t *testing.T, c *engine.Conn) {
		big := etPattern(etResetBig)
		if n, err := c.Write(big); n != len(big) || err != nil {
			t.Fatalf("Write(32 MiB) = %d, %v", n, err)
		}
		etDo(t, c, func(*engine.Conn) {}) // the send is in flight
		if n := c.OutboundBuffered(); n == 0 {
			t.Fatalf("OutboundBuffered() = 0 with a peer that does not read")
		}
	})
}

// etResetCase serves a target connection and two others on one loop,
// runs before on the target, resets it from the peer, checks the outcome
// and returns the target's OnClose.
func etResetCase(t *testing.T, before func(t *testing.T, c *engine.Conn)) etEvent {
	leaktest.Check(t) // first: its check runs after the engine stopped
	h := etEchoHandler()
	o := engine.Options{Loops: 1, WriteHighWater: 2 * etResetBig, MaxWriteBuffer: 2 * etResetBig}
	e := etStart(t, h, o)
	a := etListen(t, e, "tcp")
	others := stresstest.EchoClients(t, a, 2, 1)
	for range others {
		etOpened(t, h)
	}
	fds, haveFDs := leaktest.OpenFDs()
	peer := etDial(t, a)
	c := etOpened(t, h)
	etEchoes(t, peer, "hello")
	before(t, c)
	stresstest.EchoRound(t, others, "before the reset")

	peer.(*net.TCPConn).SetLinger(0)
	peer.Close()
	ev := etClosed(t, h)
	var oe *net.OpError
	switch {
	case ev.c != c:
		t.Fatalf("OnClose of %p, want the reset conn %p", ev.c, c)
	case !errors.Is(ev.err, syscall.ECONNRESET) && !errors.Is(ev.err, syscall.EPIPE):
		t.Fatalf("OnClose(err = %v), want ECONNRESET or EPIPE", ev.err)
	case !errors.As(ev.err, &oe):
		t.Fatalf("OnClose(err = %T), want a *net.OpError", ev.err)
	}
	if _, err := c.Write([]byte("late")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Write after the reset = %v, want net.ErrClosed", err)
	}
	if s := e.Stats(); s.Queued != 0 || s.Total().Conns != len(others) {
		t.Errorf("after the reset: Stats().Queued = %d, Conns = %d, want 0, %d", s.Queued, s.Total().Conns, len(others))
	}
	if now, _ := leaktest.OpenFDs(); haveFDs && len(leaktest.NewFDs(fds, now)) > 0 {
		t.Errorf("descriptors left by the reset conn:\n%s", leaktest.Describe(leaktest.NewFDs(fds, now)))
	}
	stresstest.EchoRound(t, others, "after the reset")
	etNoEvent(t, h.closed, "OnClose of another conn")
	t.Logf("OnClose(%v)", ev.err)
	return ev
}
