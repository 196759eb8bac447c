package engine_test

import (
	"errors"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// dialFrom connects to a from the loopback address src.
func dialFrom(t *testing.T, src string, a net.Addr) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: etWait}
	nc, err := d.Dial("tcp", a.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(etWait))
	return nc
}

// echoes reports whether nc gets its message echoed.
func echoes(nc net.Conn) bool {
	if _, err := nc.Write([]byte("ping")); err != nil {
		return false
	}
	b := make([]byte, 4)
	_, err := io.ReadFull(nc, b)
	return err == nil && string(b) == "ping"
}

// refused checks that a connection from src to a is refused: reset as
// it connects, or closed unanswered.
func refused(t *testing.T, src string, a net.Addr, what string) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: etWait}
	nc, err := d.Dial("tcp", a.String())
	if err != nil {
		return // reset before the connect returned
	}
	defer nc.Close()
	refusedConn(t, nc, what)
}

// refusedConn checks that nc is closed unanswered.
func refusedConn(t *testing.T, nc net.Conn, what string) {
	t.Helper()
	nc.SetDeadline(time.Now().Add(etWait))
	nc.Write([]byte("ping"))
	if n, err := nc.Read(make([]byte, 4)); err == nil || n > 0 {
		t.Errorf("%s: read %d bytes, %v; want it refused", what, n, err)
	}
}

// TestMaxConns checks Options.MaxConns: the connection past the cap is
// refused (OnClose with ErrTooManyConns, no OnOpen, counted), the others
// are served, and once one closes a new one is served.
func TestMaxConns(t *testing.T) { backendtest.Run(t, testMaxConns) }

func testMaxConns(t *testing.T) {
	const max = 5
	h := etEchoHandler()
	e := etStart(t, h, engine.Options{Loops: 2, MaxConns: max})
	a := etListen(t, e, "tcp")
	var conns []net.Conn
	for range max {
		nc := dialFrom(t, "127.0.0.1", a)
		if !echoes(nc) {
			t.Fatal("a connection under the cap was not served")
		}
		conns = append(conns, nc)
	}
	refused(t, "127.0.0.1", a, "the connection past MaxConns")
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrTooManyConns) {
		t.Errorf("OnClose(%v), want ErrTooManyConns", ev.err)
	}
	st := e.Stats().Total()
	if st.Refused.MaxConns != 1 || st.Accepted != max+1 {
		t.Errorf("Stats: %d refused, %d accepted; want 1 and %d", st.Refused.MaxConns, st.Accepted, max+1)
	}
	conns[0].Close()
	etClosed(t, h)
	etWaitFor(t, "the engine's count to drop", func() bool { return e.Conns() < max })
	if !echoes(dialFrom(t, "127.0.0.1", a)) {
		t.Error("a connection after one closed was not served")
	}
}

// TestMaxConnsPerIP checks Options.MaxConnsPerIP: a client that opens
// more connections than its share is refused the extra ones while
// another address is still served; a PROXY header's client counts, not
// the balancer.
func TestMaxConnsPerIP(t *testing.T) { backendtest.Run(t, testMaxConnsPerIP) }

func testMaxConnsPerIP(t *testing.T) {
	const max = 3
	h := etAddrHandler()
	h.open = nil
	e := etStart(t, h, engine.Options{Loops: 2, MaxConnsPerIP: max})
	a := etListen(t, e, "tcp")
	for range max {
		if !echoes(dialFrom(t, "127.0.0.2", a)) {
			t.Fatal("a connection under the cap was not served")
		}
	}
	for range 5 {
		refused(t, "127.0.0.2", a, "a hostile client's connection past MaxConnsPerIP")
	}
	if !echoes(dialFrom(t, "127.0.0.3", a)) {
		t.Error("another address was refused")
	}
	if n := e.Stats().Total().Refused.MaxConnsPerIP; n != 5 {
		t.Errorf("Stats: %d refused, want 5", n)
	}

	t.Run("proxy", func(t *testing.T) {
		e := etStart(t, etEchoHandler(), engine.Options{Loops: 2, MaxConnsPerIP: max})
		p := &engine.ProxyProtocol{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
		a, err := e.ListenWith("tcp", "127.0.0.1:0", engine.ListenConfig{Proxy: p})
		if err != nil {
			t.Fatal(err)
		}
		hello := func(client string) net.Conn {
			nc := dialFrom(t, "127.0.0.1", a)
			nc.Write([]byte(proxyV1(client, "198.51.100.1:443")))
			return nc
		}
		for i := range max {
			if !echoes(hello("192.0.2.7:" + itoa(uint16(1000+i)))) {
				t.Fatal("a client's connection under the cap was not served")
			}
		}
		refusedConn(t, hello("192.0.2.7:2000"), "the client's connection past MaxConnsPerIP")
		if !echoes(hello("192.0.2.8:1000")) {
			t.Error("another client behind the same balancer was refused")
		}
	})
}
