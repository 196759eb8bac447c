package engine_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// etDatagram is a datagram as OnData saw it.
type etDatagram struct {
	data string
	from net.Addr
}

// etUDP starts an engine with h listening on UDP and returns the socket's
// Conn and its address.
func etUDP(t *testing.T, h *etHandler, o engine.Options) (*engine.Engine, *engine.Conn, net.Addr) {
	t.Helper()
	e := etStart(t, h, o)
	a := etListen(t, e, "udp")
	return e, etOpened(t, h), a
}

// etDialUDP returns a UDP socket connected to a, closed at cleanup.
func etDialUDP(t *testing.T, a net.Addr) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, a.(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestUDPEcho checks that each datagram arrives whole with its source,
// and that WriteTo replies reach that source.
func TestUDPEcho(t *testing.T) { backendtest.Run(t, testUDPEcho) }

func testUDPEcho(t *testing.T) {
	dgrams := make(chan etDatagram, 16)
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		dgrams <- etDatagram{string(in.Bytes()), in.From()}
		return etEcho(c, in)
	}
	_, uc, a := etUDP(t, h, engine.Options{})
	if uc.RemoteAddr() != nil {
		t.Errorf("RemoteAddr() = %v on a UDP socket, want nil", uc.RemoteAddr())
	}
	if _, err := uc.Write([]byte("x")); err == nil {
		t.Errorf("Write on a UDP socket = nil error, want one (WriteTo is the way)")
	}
	peers := []*net.UDPConn{etDialUDP(t, a), etDialUDP(t, a)}
	for round := range 3 {
		for i, p := range peers {
			msg := []byte{byte('a' + i), byte('0' + round)}
			p.Write(msg)
			d := etRecv(t, dgrams, "datagram")
			if d.data != string(msg) || d.from == nil || d.from.String() != p.LocalAddr().String() {
				t.Fatalf("OnData(%q from %v), want (%q from %v)", d.data, d.from, msg, p.LocalAddr())
			}
			p.SetReadDeadline(time.Now().Add(etWait))
			var b [64]byte
			n, err := p.Read(b[:])
			if err != nil || string(b[:n]) != string(msg) {
				t.Fatalf("reply = %q, %v, want %q", b[:n], err, msg)
			}
		}
	}
}

// TestUDPEmptyDatagram checks that an empty datagram calls OnData with no
// bytes and its source.
func TestUDPEmptyDatagram(t *testing.T) { backendtest.Run(t, testUDPEmptyDatagram) }

func testUDPEmptyDatagram(t *testing.T) {
	dgrams := make(chan etDatagram, 16)
	h := etNewHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		dgrams <- etDatagram{string(in.Bytes()), in.From()}
		return engine.None
	}
	_, _, a := etUDP(t, h, engine.Options{})
	p := etDialUDP(t, a)
	if _, err := p.Write(nil); err != nil {
		t.Fatalf("Write(empty datagram) = %v", err)
	}
	p.Write([]byte("after"))
	if d := etRecv(t, dgrams, "datagram"); d.data != "" || d.from == nil {
		t.Fatalf("OnData(%q from %v), want (\"\" from %v)", d.data, d.from, p.LocalAddr())
	}
	if d := etRecv(t, dgrams, "datagram"); d.data != "after" {
		t.Fatalf("OnData(%q), want \"after\"", d.data)
	}
}

// TestUDPNoCarryOver checks that bytes OnData leaves of a datagram are not
// presented with the next one.
func TestUDPNoCarryOver(t *testing.T) { backendtest.Run(t, testUDPNoCarryOver) }

func testUDPNoCarryOver(t *testing.T) {
	dgrams := make(chan string, 16)
	h := etNewHandler()
	h.data = func(_ *engine.Conn, in *engine.Inbound) engine.Action {
		dgrams <- string(in.Bytes())
		in.Discard(1) // leave the rest
		return engine.None
	}
	_, uc, a := etUDP(t, h, engine.Options{})
	p := etDialUDP(t, a)
	for _, msg := range []string{"first", "second", "third"} {
		p.Write([]byte(msg))
		if got := etRecv(t, dgrams, "datagram"); got != msg {
			t.Fatalf("OnData(%q), want %q", got, msg)
		}
	}
	uc.Wake()
	if got := etRecv(t, dgrams, "OnData after Wake"); got != "" {
		t.Fatalf("OnData after Wake saw %q, want nothing", got)
	}
}

// TestUDPIdleTimeout checks that IdleTimeout, meant for connections, does
// not close a UDP socket that had no datagram for that long: the server
// would go deaf for good.
func TestUDPIdleTimeout(t *testing.T) { backendtest.Run(t, testUDPIdleTimeout) }

func testUDPIdleTimeout(t *testing.T) {
	clk := engine.NewManualClock(etT0)
	h := etEchoHandler()
	e, _, a := etUDP(t, h, engine.WithClock(engine.Options{IdleTimeout: time.Second}, clk))
	etStep(e, clk, 2*time.Second)
	select {
	case ev := <-h.closed:
		t.Fatalf("UDP socket closed after IdleTimeout without datagrams: OnClose(%v)", ev.err)
	default:
	}
	etEchoes(t, etDialUDP(t, a), "still serving")
}

// TestUDPStop checks that Stop closes a UDP socket with ErrEngineStopped
// and that WriteTo fails afterwards.
func TestUDPStop(t *testing.T) { backendtest.Run(t, testUDPStop) }

func testUDPStop(t *testing.T) {
	h := etEchoHandler()
	e, uc, a := etUDP(t, h, engine.Options{})
	e.Stop()
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrEngineStopped) {
		t.Errorf("OnClose(err = %v), want ErrEngineStopped", ev.err)
	}
	if _, err := uc.WriteTo([]byte("x"), a); !errors.Is(err, net.ErrClosed) {
		t.Errorf("WriteTo after Stop = %v, want net.ErrClosed", err)
	}
}
