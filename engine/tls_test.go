package engine_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// tlsVersions are the versions every TLS behaviour is tested with.
var tlsVersions = []uint16{tls.VersionTLS12, tls.VersionTLS13}

// etServeTLS starts an engine with h serving TLS with cfg (the test PKI's
// server configuration when nil) and returns it and its address.
func etServeTLS(t testing.TB, h *etHandler, o engine.Options, cfg *tls.Config) (*engine.Engine, net.Addr) {
	t.Helper()
	if cfg == nil {
		cfg = tlstest.Get().ServerConfig()
	}
	e := etStart(t, h, o)
	a, err := e.ListenTLS("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatalf("ListenTLS: %v", err)
	}
	return e, a
}

// etDialTLS connects to a with crypto/tls over package net, closed at
// cleanup.
func etDialTLS(t testing.TB, a net.Addr, cfg *tls.Config) *tls.Conn {
	t.Helper()
	if cfg == nil {
		cfg = tlstest.Get().ClientConfig()
	}
	d := &net.Dialer{Timeout: etWait}
	c, err := tls.DialWithDialer(d, "tcp", a.String(), cfg)
	if err != nil {
		t.Fatalf("tls.Dial(%v): %v", a, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(etWait))
	return c
}

// etEchoCheck writes msg to c and reads it back.
func etEchoCheck(t testing.TB, c net.Conn, msg []byte) {
	t.Helper()
	errc := make(chan error, 1)
	go func() { _, err := c.Write(msg); errc <- err }()
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("reading the echo of %d bytes: %v", len(msg), err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("Write: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("echo of %d bytes differs", len(msg))
	}
}

func TestTLSEcho(t *testing.T) { backendtest.Run(t, testTLSEcho) }

func testTLSEcho(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(tls.VersionName(v), func(t *testing.T) {
			h := etEchoHandler()
			states := make(chan tls.ConnectionState, 1)
			h.open = func(c *engine.Conn) ([]byte, engine.Action) {
				st, ok := c.ConnectionState()
				if !ok {
					t.Errorf("ConnectionState of a TLS conn: not TLS")
				}
				states <- st
				return nil, engine.None
			}
			cfg := tlstest.Get().ServerConfig()
			cfg.MinVersion, cfg.MaxVersion = v, v
			cfg.NextProtos = []string{"gale/1", "http/1.1"}
			_, a := etServeTLS(t, h, engine.Options{}, cfg)
			ccfg := tlstest.Get().ClientConfig()
			ccfg.NextProtos = []string{"gale/1"}
			c := etDialTLS(t, a, ccfg)
			for _, n := range []int{1, 1000, 16 << 10, 100 << 10, 1 << 20} {
				etEchoCheck(t, c, bytes.Repeat([]byte{byte(n)}, n))
			}
			st := etRecv(t, states, "OnOpen's ConnectionState")
			if !st.HandshakeComplete || st.Version != v || st.NegotiatedProtocol != "gale/1" || st.ServerName != "localhost" {
				t.Errorf("server's ConnectionState: complete %v, version %x, ALPN %q, SNI %q; want true, %x, gale/1, localhost",
					st.HandshakeComplete, st.Version, st.NegotiatedProtocol, st.ServerName, v)
			}
		})
	}
}

func TestTLSResumption(t *testing.T) { backendtest.Run(t, testTLSResumption) }

func testTLSResumption(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(tls.VersionName(v), func(t *testing.T) {
			h := etEchoHandler()
			resumed := make(chan bool, 2)
			h.open = func(c *engine.Conn) ([]byte, engine.Action) {
				st, _ := c.ConnectionState()
				resumed <- st.DidResume
				return nil, engine.None
			}
			cfg := tlstest.Get().ServerConfig()
			cfg.MaxVersion = v
			_, a := etServeTLS(t, h, engine.Options{}, cfg)
			ccfg := tlstest.Get().ClientConfig()
			ccfg.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			first := etDialTLS(t, a, ccfg)
			etEchoCheck(t, first, []byte("first")) // the TLS 1.3 ticket comes after the handshake
			first.Close()
			second := etDialTLS(t, a, ccfg)
			etEchoCheck(t, second, []byte("second"))
			if !second.ConnectionState().DidResume {
				t.Errorf("client: second connection did not resume")
			}
			if r1, r2 := etRecv(t, resumed, "first OnOpen"), etRecv(t, resumed, "second OnOpen"); r1 || !r2 {
				t.Errorf("server: DidResume %v then %v; want false then true", r1, r2)
			}
		})
	}
}

func TestTLSClientCertificates(t *testing.T) { backendtest.Run(t, testTLSClientCertificates) }

func testTLSClientCertificates(t *testing.T) {
	p := tlstest.Get()
	for _, v := range tlsVersions {
		t.Run(tls.VersionName(v), func(t *testing.T) {
			h := etEchoHandler()
			peers := make(chan int, 1)
			h.open = func(c *engine.Conn) ([]byte, engine.Action) {
				st, _ := c.ConnectionState()
				peers <- len(st.PeerCertificates)
				return nil, engine.None
			}
			cfg := p.ServerConfig()
			cfg.MaxVersion = v
			cfg.ClientAuth, cfg.ClientCAs = tls.RequireAndVerifyClientCert, p.Roots
			_, a := etServeTLS(t, h, engine.Options{}, cfg)

			ccfg := p.ClientConfig()
			ccfg.Certificates = []tls.Certificate{p.Client}
			etEchoCheck(t, etDialTLS(t, a, ccfg), []byte("with a certificate"))
			etOpened(t, h)
			if n := etRecv(t, peers, "OnOpen"); n != 1 {
				t.Errorf("server saw %d peer certificates, want 1", n)
			}

			// Without one the handshake fails: OnClose says why, and
			// OnOpen never runs.
			nc, err := net.Dial("tcp", a.String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := tls.Client(nc, p.ClientConfig())
			c.SetDeadline(time.Now().Add(etWait))
			c.Handshake()
			c.Read(make([]byte, 1)) // TLS 1.3: the server's verdict follows the client's Finished
			ev := etClosed(t, h)
			if ev.err == nil || !bytes.Contains([]byte(ev.err.Error()), []byte("certificate")) {
				t.Errorf("OnClose after a handshake without the required certificate: %v", ev.err)
			}
			etNoEvent(t, h.opened, "OnOpen")
		})
	}
}

func TestTLSCloseNotify(t *testing.T) { backendtest.Run(t, testTLSCloseNotify) }

func testTLSCloseNotify(t *testing.T) {
	for _, v := range tlsVersions {
		t.Run(tls.VersionName(v), func(t *testing.T) {
			cfg := tlstest.Get().ServerConfig()
			cfg.MaxVersion = v

			// Client to server: the peer's close_notify is OnClose's io.EOF.
			h := etEchoHandler()
			_, a := etServeTLS(t, h, engine.Options{}, cfg)
			c := etDialTLS(t, a, nil)
			etEchoCheck(t, c, []byte("hello"))
			if err := c.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if ev := etClosed(t, h); ev.err != io.EOF {
				t.Errorf("OnClose after the client's close_notify: %v, want io.EOF", ev.err)
			}
			// ...and the engine answered with its own.
			if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
				t.Errorf("client Read after the server closed: %d, %v; want io.EOF (close_notify)", n, err)
			}

			// Server to client: Close sends close_notify after the output.
			h2 := etNewHandler()
			h2.open = func(c *engine.Conn) ([]byte, engine.Action) { return []byte("bye"), engine.Close }
			_, a2 := etServeTLS(t, h2, engine.Options{}, cfg)
			c2 := etDialTLS(t, a2, nil)
			got, err := io.ReadAll(c2)
			if string(got) != "bye" || err != nil {
				t.Errorf("client read %q, %v; want \"bye\" then a clean close_notify", got, err)
			}

			// A TCP end without close_notify, mid-record, is a truncation.
			h3 := etEchoHandler()
			_, a3 := etServeTLS(t, h3, engine.Options{}, cfg)
			c3 := etDialTLS(t, a3, nil)
			etOpened(t, h3)
			etEchoCheck(t, c3, []byte("x"))
			raw := c3.NetConn()
			raw.Write([]byte{23, 3, 3, 0, 100, 1, 2, 3}) // a record's header and 3 of its 100 bytes
			raw.(*net.TCPConn).CloseWrite()
			ev := etClosed(t, h3)
			if !errors.Is(ev.err, io.ErrUnexpectedEOF) {
				t.Errorf("OnClose after a truncated record: %v, want io.ErrUnexpectedEOF", ev.err)
			}
		})
	}
}

func TestTLSDial(t *testing.T) { backendtest.Run(t, testTLSDial) }

func testTLSDial(t *testing.T) {
	p := tlstest.Get()
	// A crypto/tls server over package net echoes.
	ln, err := tls.Listen("tcp", "127.0.0.1:0", p.ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	h := etNewHandler()
	got := make(chan []byte, 16)
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		got <- bytes.Clone(in.Bytes())
		in.Discard(in.Len())
		return engine.None
	}
	e := etStart(t, h, engine.Options{})
	for _, target := range []net.Addr{ln.Addr()} {
		c, err := e.DialTLS("tcp", target.String(), p.ClientConfig())
		if err != nil {
			t.Fatalf("DialTLS: %v", err)
		}
		etOpened(t, h)
		if st, _ := c.ConnectionState(); !st.HandshakeComplete {
			t.Errorf("DialTLS returned before the handshake completed")
		}
		msg := bytes.Repeat([]byte("dial "), 10000)
		c.Write(msg)
		var all []byte
		for len(all) < len(msg) {
			all = append(all, etRecv(t, got, "echo")...)
		}
		if !bytes.Equal(all, msg) {
			t.Errorf("echo through DialTLS differs")
		}
		c.Close()
		etClosed(t, h)
	}
	// A server the client does not trust: DialTLS fails with the reason.
	bad := p.ClientConfig()
	bad.RootCAs = nil
	if _, err := e.DialTLS("tcp", ln.Addr().String(), bad); err == nil {
		t.Errorf("DialTLS to an untrusted server succeeded")
	}
}

// goSuite is a version and cipher suite the crypto/tls interop tests pin
// on both ends. crypto/tls lets no one choose TLS 1.3's suite: id 0
// stands for whichever it picks.
type goSuite struct {
	version uint16
	id      uint16
}

func (s goSuite) String() string {
	if s.id == 0 {
		return tls.VersionName(s.version)
	}
	return tls.VersionName(s.version) + " " + tls.CipherSuiteName(s.id)
}

// pin restricts cfg to s.
func (s goSuite) pin(cfg *tls.Config) *tls.Config {
	cfg.MinVersion, cfg.MaxVersion = s.version, s.version
	if s.id != 0 {
		cfg.CipherSuites = []uint16{s.id}
	}
	return cfg
}

// check reports whether st is s.
func (s goSuite) check(t *testing.T, who string, st tls.ConnectionState) {
	t.Helper()
	if st.Version != s.version || (s.id != 0 && st.CipherSuite != s.id) {
		t.Errorf("%s negotiated %s %s, want %v", who, tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), s)
	}
}

var goSuites = []goSuite{
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
	{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256},
	{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384},
	{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256},
	// CBC: records with an explicit IV, a MAC and padding.
	{tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA},
	{tls.VersionTLS12, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA},
	{tls.VersionTLS13, 0},
}

// goSuiteSizes are the messages each suite echoes: a byte, a record and
// a byte, many records.
var goSuiteSizes = []int{1, 16<<10 + 1, 300 << 10}

// TestTLSSuites runs every pinned suite between the engine and crypto/tls
// both ways, and between two engine ends: echoes of goSuiteSizes, and
// both ends agreeing on the suite.
func TestTLSSuites(t *testing.T) { backendtest.Run(t, testTLSSuites) }

func testTLSSuites(t *testing.T) {
	p := tlstest.Get()
	for _, s := range goSuites {
		t.Run(s.String(), func(t *testing.T) {
			t.Run("crypto-tls client", func(t *testing.T) {
				h := etEchoHandler()
				states := etTLSStates(h)
				_, a := etServeTLS(t, h, engine.Options{}, s.pin(p.ServerConfig()))
				c := etDialTLS(t, a, s.pin(p.ClientConfig()))
				for _, n := range goSuiteSizes {
					etEchoCheck(t, c, etPattern(n))
				}
				s.check(t, "client", c.ConnectionState())
				s.check(t, "server", etRecv(t, states, "OnOpen's ConnectionState"))
			})
			t.Run("DialTLS to crypto-tls", func(t *testing.T) {
				ln := etGoEchoServer(t, s.pin(p.ServerConfig()))
				etDialTLSEcho(t, ln.Addr(), s, nil)
			})
			t.Run("DialTLS to ListenTLS", func(t *testing.T) {
				h := etEchoHandler()
				states := etTLSStates(h)
				_, a := etServeTLS(t, h, engine.Options{}, s.pin(p.ServerConfig()))
				etDialTLSEcho(t, a, s, states)
			})
		})
	}
}

// etGoEchoServer starts a crypto/tls echo server over package net,
// stopped at cleanup.
func etGoEchoServer(t *testing.T, cfg *tls.Config) net.Listener {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(etWait))
				io.Copy(c, c)
			})
		}
	})
	return ln
}

// etDialTLSEcho dials a with DialTLS pinned to s, echoes goSuiteSizes
// and checks the suite, on the server's end too when states has it.
func etDialTLSEcho(t *testing.T, a net.Addr, s goSuite, states chan tls.ConnectionState) {
	t.Helper()
	got := newTextLog()
	h := etLogHandler(got)
	e := etStart(t, h, engine.Options{})
	c, err := e.DialTLS("tcp", a.String(), s.pin(tlstest.Get().ClientConfig()))
	if err != nil {
		t.Fatalf("DialTLS: %v", err)
	}
	st, _ := c.ConnectionState()
	s.check(t, "DialTLS", st)
	if states != nil {
		s.check(t, "ListenTLS", etRecv(t, states, "OnOpen's ConnectionState"))
	}
	var want []byte
	for _, n := range goSuiteSizes {
		msg := etPattern(n)
		want = append(want, msg...)
		if _, err := c.Write(msg); err != nil {
			t.Fatalf("Write: %v", err)
		}
		if !got.await(func(s string) bool { return len(s) >= len(want) }, nil) {
			t.Fatalf("echo: %d bytes, want %d", len(got.String()), len(want))
		}
	}
	if !bytes.Equal([]byte(got.String()), want) {
		t.Errorf("echo through DialTLS differs")
	}
	c.Close()
	if ev := etClosed(t, h); ev.err != nil {
		t.Errorf("OnClose after Close: %v, want nil", ev.err)
	}
}

// etLogHandler returns a handler that writes what its connections
// receive to log.
func etLogHandler(log *textLog) *etHandler {
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		log.Write(in.Bytes())
		in.Discard(in.Len())
		return engine.None
	}
	return h
}
