package engine_test

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// loopback trusts the test's clients as balancers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// etAddrHandler is an echo handler that first writes the connection's
// RemoteAddr and a newline.
func etAddrHandler() *etHandler {
	h := etEchoHandler()
	h.open = func(c *engine.Conn) ([]byte, engine.Action) {
		return []byte(c.RemoteAddr().String() + "\n"), engine.None
	}
	return h
}

func proxyV1(src, dst string) string {
	s, d := netip.MustParseAddrPort(src), netip.MustParseAddrPort(dst)
	fam := "TCP4"
	if s.Addr().Is6() {
		fam = "TCP6"
	}
	return "PROXY " + fam + " " + s.Addr().String() + " " + d.Addr().String() + " " +
		itoa(s.Port()) + " " + itoa(d.Port()) + "\r\n"
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }

// proxyV2 builds a version 2 PROXY header for a TCP over IPv4 or IPv6
// connection from src to dst, with tlv bytes of TLVs after the
// addresses; local makes it a LOCAL command.
func proxyV2(src, dst string, local bool, tlv int) []byte {
	s, d := netip.MustParseAddrPort(src), netip.MustParseAddrPort(dst)
	b := []byte("\r\n\r\n\x00\r\nQUIT\n")
	cmd := byte(0x21)
	if local {
		cmd = 0x20
	}
	var addrs []byte
	fam := byte(0x11)
	if s.Addr().Is4() {
		a, c := s.Addr().As4(), d.Addr().As4()
		addrs = append(append(addrs, a[:]...), c[:]...)
	} else {
		fam = 0x21
		a, c := s.Addr().As16(), d.Addr().As16()
		addrs = append(append(addrs, a[:]...), c[:]...)
	}
	addrs = binary.BigEndian.AppendUint16(addrs, s.Port())
	addrs = binary.BigEndian.AppendUint16(addrs, d.Port())
	for tlv > 0 { // NOOP TLVs (type 0x04)
		n := min(tlv-3, 60000)
		addrs = append(addrs, 0x04)
		addrs = binary.BigEndian.AppendUint16(addrs, uint16(n))
		addrs = append(addrs, make([]byte, n)...)
		tlv -= 3 + n
	}
	b = append(b, cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(addrs)))
	return append(b, addrs...)
}

// proxyDial connects to a, sends head then "hello\n", and returns the
// address the server saw and what it echoed.
func proxyDial(t *testing.T, a net.Addr, head []byte) (seen, echo string) {
	t.Helper()
	nc := etDial(t, a)
	if _, err := nc.Write(append(head, "hello\n"...)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(nc)
	seen, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the address the server saw: %v", err)
	}
	echo, err = r.ReadString('\n')
	if err != nil {
		t.Fatalf("reading the echo: %v", err)
	}
	return strings.TrimSpace(seen), strings.TrimSpace(echo)
}

// TestProxyProtocol checks that a listener with ListenConfig.Proxy takes
// the client's address from a trusted balancer's header, v1 and v2, over
// IPv4 and IPv6, and serves the bytes after it; that a LOCAL header keeps
// the socket's peer; and that an untrusted source's bytes, a header
// included, are its protocol's.
func TestProxyProtocol(t *testing.T) { backendtest.Run(t, testProxyProtocol) }

func testProxyProtocol(t *testing.T) {
	h := etAddrHandler()
	e := etStart(t, h, engine.Options{Loops: 2})
	a, err := e.ListenWith("tcp", "127.0.0.1:0", engine.ListenConfig{Proxy: &engine.ProxyProtocol{Trusted: loopback}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, want string
		head       []byte
	}{
		{"v1", "192.0.2.7:4242", []byte(proxyV1("192.0.2.7:4242", "198.51.100.1:443"))},
		{"v1-ipv6", "[2001:db8::7]:4242", []byte(proxyV1("[2001:db8::7]:4242", "[2001:db8::1]:443"))},
		{"v2", "192.0.2.8:1234", proxyV2("192.0.2.8:1234", "198.51.100.1:443", false, 0)},
		{"v2-ipv6-tlvs", "[2001:db8::8]:1234", proxyV2("[2001:db8::8]:1234", "[2001:db8::1]:443", false, 300)},
		{"v2-local", "127.0.0.1:", proxyV2("192.0.2.9:1", "198.51.100.1:443", true, 0)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seen, echo := proxyDial(t, a, tc.head)
			if !strings.HasPrefix(seen, tc.want) || echo != "hello" {
				t.Errorf("server saw %q and echoed %q, want %q and \"hello\"", seen, echo, tc.want)
			}
		})
	}
	t.Run("untrusted", func(t *testing.T) {
		e := etStart(t, etAddrHandler(), engine.Options{Loops: 1})
		p := &engine.ProxyProtocol{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
		a, err := e.ListenWith("tcp", "127.0.0.1:0", engine.ListenConfig{Proxy: p})
		if err != nil {
			t.Fatal(err)
		}
		head := proxyV1("192.0.2.7:4242", "198.51.100.1:443")
		seen, echo := proxyDial(t, a, []byte(head))
		if !strings.HasPrefix(seen, "127.0.0.1:") || echo+"\r" != strings.TrimSuffix(head, "\n") {
			t.Errorf("server saw %q and echoed %q, want 127.0.0.1 and the header as data", seen, echo)
		}
	})
}

// TestProxyProtocolByteByByte checks that a header that comes a byte at a
// time is read whole, with the bytes after it.
func TestProxyProtocolByteByByte(t *testing.T) { backendtest.Run(t, testProxyByteByByte) }

func testProxyByteByByte(t *testing.T) {
	e := etStart(t, etAddrHandler(), engine.Options{Loops: 1})
	a, err := e.ListenWith("tcp", "127.0.0.1:0", engine.ListenConfig{Proxy: &engine.ProxyProtocol{Trusted: loopback}})
	if err != nil {
		t.Fatal(err)
	}
	for _, head := range [][]byte{[]byte(proxyV1("192.0.2.7:4242", "198.51.100.1:443")), proxyV2("192.0.2.8:1234", "198.51.100.1:443", false, 20)} {
		nc := etDial(t, a)
		for _, b := range head {
			nc.Write([]byte{b})
			time.Sleep(200 * time.Microsecond)
		}
		nc.Write([]byte("hello\n"))
		r := bufio.NewReader(nc)
		seen, _ := r.ReadString('\n')
		echo, err := r.ReadString('\n')
		if !strings.HasPrefix(seen, "192.0.2.") || echo != "hello\n" || err != nil {
			t.Errorf("server saw %q and echoed %q (%v)", seen, echo, err)
		}
	}
}

// TestProxyProtocolTLS checks that the TLS handshake begins after the
// header: a client whose header and ClientHello come in one write.
func TestProxyProtocolTLS(t *testing.T) { backendtest.Run(t, testProxyTLS) }

func testProxyTLS(t *testing.T) {
	e := etStart(t, etAddrHandler(), engine.Options{Loops: 1})
	pki := tlstest.Get()
	srv, client := pki.ServerConfig(), pki.ClientConfig()
	a, err := e.ListenWith("tcp", "127.0.0.1:0", engine.ListenConfig{TLS: srv, Proxy: &engine.ProxyProtocol{Trusted: loopback}})
	if err != nil {
		t.Fatal(err)
	}
	nc := etDial(t, a)
	tc := tls.Client(&prefixConn{Conn: nc, prefix: proxyV2("192.0.2.8:1234", "198.51.100.1:443", false, 0)}, client)
	if _, err := tc.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(tc)
	seen, _ := r.ReadString('\n')
	echo, err := r.ReadString('\n')
	if seen != "192.0.2.8:1234\n" || echo != "hello\n" || err != nil {
		t.Errorf("server saw %q and echoed %q (%v)", seen, echo, err)
	}
}

// prefixConn sends prefix before its first write.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Write(p []byte) (int, error) {
	if c.prefix != nil {
		b := append(c.prefix, p...)
		c.prefix = nil
		_, err := c.Conn.Write(b)
		return len(p), err
	}
	return c.Conn.Write(p)
}

// TestProxyProtocolHostile drives trusted clients that send a malformed
// header, an oversized one, a truncated one and then nothing, and none,
// each closed with ErrProxyHeader (the silent ones at the timeout), with
// no OnOpen, and no goroutine held while they wait, while a client
// with a good header is served meanwhile.
func TestProxyProtocolHostile(t *testing.T) { backendtest.Run(t, testProxyHostile) }

func testProxyHostile(t *testing.T) {
	h := etAddrHandler()
	e := etStart(t, h, engine.Options{Loops: 2})
	p := &engine.ProxyProtocol{Trusted: loopback, Timeout: 300 * time.Millisecond, MaxHeader: 512}
	a, err := e.ListenWith("tcp", "127.0.0.1:0", engine.ListenConfig{Proxy: p})
	if err != nil {
		t.Fatal(err)
	}
	bad := map[string][]byte{
		"garbage":   []byte("GET / HTTP/1.1\r\n\r\n"),
		"bad-v1":    []byte("PROXY TCP4 999.1.1.1 1.1.1.1 1 2\r\n"),
		"no-crlf":   []byte("PROXY TCP4 " + strings.Repeat("1", 120)),
		"oversized": proxyV2("192.0.2.8:1234", "198.51.100.1:443", false, 1000),
		"truncated": proxyV2("192.0.2.8:1234", "198.51.100.1:443", false, 0)[:20],
		"silent":    nil,
	}
	before := runtime.NumGoroutine()
	const each = 20
	var conns []net.Conn
	for _, b := range bad {
		for range each {
			nc := etDial(t, a)
			if len(b) > 0 {
				nc.Write(b)
			}
			conns = append(conns, nc)
		}
	}
	// The net backend reads each connection on a goroutine: the others
	// hold none for a connection waiting.
	if n := runtime.NumGoroutine(); e.Stats().Loops[0].Backend != backend.Net && n > before+len(bad)*each/4 {
		t.Errorf("%d goroutines with %d connections waiting for headers, %d before", n, len(conns), before)
	}
	seen, echo := proxyDial(t, a, []byte(proxyV1("192.0.2.7:4242", "198.51.100.1:443")))
	if seen != "192.0.2.7:4242" || echo != "hello" {
		t.Errorf("a good client meanwhile: server saw %q and echoed %q", seen, echo)
	}
	timeouts := 0
	for range conns {
		ev := etClosed(t, h)
		if !errors.Is(ev.err, engine.ErrProxyHeader) {
			t.Fatalf("OnClose(%v), want ErrProxyHeader", ev.err)
		}
		if errors.Is(ev.err, os.ErrDeadlineExceeded) {
			timeouts++
		}
	}
	if timeouts != 2*each { // the truncated and the silent
		t.Errorf("%d connections closed at the timeout, want %d", timeouts, 2*each)
	}
	for _, nc := range conns {
		nc.SetReadDeadline(time.Now().Add(etWait))
		if b, _ := io.ReadAll(nc); len(b) > 0 {
			t.Errorf("a hostile client read %q, want nothing", b)
		}
	}
	if n := len(h.opened); n != 1 {
		t.Errorf("%d OnOpen calls, want 1 (the good client)", n)
	}
}

// TestAdoptProxy checks Adoption.Proxy: a connection accepted elsewhere
// reads its header on the loop.
func TestAdoptProxy(t *testing.T) { backendtest.Run(t, testAdoptProxy) }

func testAdoptProxy(t *testing.T) {
	e := etStart(t, etAddrHandler(), engine.Options{Loops: 1})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			if _, err := e.AdoptWith(nc, engine.Adoption{Proxy: &engine.ProxyProtocol{Trusted: loopback}}); err != nil {
				nc.Close()
			}
		}
	}()
	seen, echo := proxyDial(t, ln.Addr(), proxyV2("192.0.2.8:1234", "198.51.100.1:443", false, 0))
	if seen != "192.0.2.8:1234" || echo != "hello" {
		t.Errorf("server saw %q and echoed %q", seen, echo)
	}
}
