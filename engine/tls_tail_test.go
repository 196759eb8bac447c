package engine_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// heldConn is a net.Conn that holds back what is written to it after
// its first write, until flush sends it all in one write. The first
// write of a crypto/tls client is its ClientHello, of a server its first
// flight; what the next carry, the last flight of the handshake (a TLS
// 1.3 client's Finished, a TLS 1.2 server's), then reaches the peer in
// one segment with the records that follow it, as it does from a peer
// that writes at once after its handshake.
type heldConn struct {
	net.Conn
	mu     sync.Mutex
	writes int
	held   []byte
}

func (c *heldConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes++
	if c.writes == 1 { // the ClientHello
		return c.Conn.Write(p)
	}
	c.held = append(c.held, p...)
	return len(p), nil
}

func (c *heldConn) flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.Conn.Write(c.held)
	c.held = nil
	return err
}

// TestTLSDataWithFinished: a TLS 1.3 client's Finished arrives together
// with records of application data, the first of them small (crypto/tls
// starts a connection with records of about 1 KiB). The handshake must
// stop reading at the end of its last record: had it read part of the
// next, the rest, left to the loop, would start inside a record, which
// the loop would take for a header, and the connection would stall
// (internal/tlsrec's handshake Read once copied all it was fed).
func TestTLSDataWithFinished(t *testing.T) { backendtest.Run(t, testTLSDataWithFinished) }

func testTLSDataWithFinished(t *testing.T) {
	for _, n := range []int{100, 5000, 50000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			_, a := etServeTLS(t, etEchoHandler(), engine.Options{}, nil)
			nc := etDial(t, a)
			hc := &heldConn{Conn: nc}
			c := tls.Client(hc, tlstest.Get().ClientConfig())
			c.SetDeadline(time.Now().Add(etWait))
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			if v := c.ConnectionState().Version; v != tls.VersionTLS13 {
				t.Fatalf("negotiated %s, want TLS 1.3", tls.VersionName(v))
			}
			msg := etPattern(n)
			c.Write(msg)
			if err := hc.flush(); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n)
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatalf("echo of %d bytes written with the Finished: %v", n, err)
			}
			if !bytes.Equal(got, msg) {
				t.Fatalf("echo of %d bytes differs", n)
			}
		})
	}
}

// TestTLSDialDataWithFinished is TestTLSDataWithFinished for DialTLS: a
// TLS 1.2 server's Finished arrives together with records of a greeting
// the server sends at once, the first of them small; all of it must
// reach OnData.
func TestTLSDialDataWithFinished(t *testing.T) { backendtest.Run(t, testTLSDialDataWithFinished) }

func testTLSDialDataWithFinished(t *testing.T) {
	for _, n := range []int{100, 5000, 50000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			greeting := etPattern(n)
			served := make(chan error, 1)
			go func() { served <- greet(ln, greeting) }()

			got := newTextLog()
			h := etLogHandler(got)
			e := etStart(t, h, engine.Options{})
			cfg := tlstest.Get().ClientConfig()
			cfg.MaxVersion = tls.VersionTLS12
			c, err := e.DialTLS("tcp", ln.Addr().String(), cfg)
			if err != nil {
				t.Fatalf("DialTLS: %v", err)
			}
			defer c.Close()
			if err := etRecv(t, served, "the server's greeting"); err != nil {
				t.Fatalf("server: %v", err)
			}
			if !got.await(func(s string) bool { return len(s) >= n }, nil) {
				t.Fatalf("received %d bytes of the %d-byte greeting sent with the Finished", len(got.String()), n)
			}
			if !bytes.Equal([]byte(got.String()), greeting) {
				t.Fatalf("greeting of %d bytes differs", n)
			}
		})
	}
}

// greet accepts a connection on ln, handshakes as a TLS 1.2 server over
// a heldConn, writes greeting and sends the Finished and the greeting
// in one write.
func greet(ln net.Listener, greeting []byte) error {
	nc, err := ln.Accept()
	if err != nil {
		return err
	}
	hc := &heldConn{Conn: nc}
	c := tls.Server(hc, tlstest.Get().ServerConfig())
	c.SetDeadline(time.Now().Add(etWait))
	go func() { // the client closes; c.Close would wait for nothing
		c.Read(make([]byte, 1))
		nc.Close()
	}()
	if err := c.Handshake(); err != nil {
		return err
	}
	if _, err := c.Write(greeting); err != nil {
		return err
	}
	return hc.flush()
}

// TestTLSStreamRightAfterHandshake: a client that streams megabytes right
// after its Finished, before the server's handshake worker has read it,
// is held back by TCP (the loop stops reading past the handshake's input
// cap) and served once the handshake ends, not closed.
func TestTLSStreamRightAfterHandshake(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		h := etEchoHandler()
		cfg := tlstest.Get().ServerConfig()
		// The server's handshake lingers after the client's has ended.
		cfg.VerifyConnection = func(tls.ConnectionState) error { time.Sleep(200 * time.Millisecond); return nil }
		_, a := etServeTLS(t, h, engine.Options{}, cfg)
		ccfg := tlstest.Get().ClientConfig()
		ccfg.MinVersion = tls.VersionTLS13 // the client's handshake ends before the server's
		c := etDialTLS(t, a, ccfg)
		etEchoCheck(t, c, bytes.Repeat([]byte("s"), 4<<20))
	})
}
