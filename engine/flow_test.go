package engine_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// PauseRead stops the reading: what the peer sends meanwhile stays in
// the socket; ResumeRead from another goroutine brings it.
func TestPauseRead(t *testing.T) { backendtest.Run(t, testPauseRead) }

func testPauseRead(t *testing.T) {
	var got atomic.Int64
	var pausing atomic.Bool
	pausing.Store(true)
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if got.Add(int64(in.Len())) > 0 && pausing.Load() {
			c.PauseRead()
		}
		in.Discard(in.Len())
		return engine.None
	}
	_, c, peer := etServe(t, h, engine.Options{}, "tcp")
	const total = 8 << 20
	sent := make(chan error, 1)
	go func() {
		_, err := peer.Write(make([]byte, total))
		sent <- err
	}()
	etWaitFor(t, "the first bytes", func() bool { return got.Load() > 0 })
	time.Sleep(100 * time.Millisecond)
	if n := got.Load(); n >= total {
		t.Fatalf("read %d bytes while paused, want the socket to hold them", n)
	}
	pausing.Store(false)
	if err := c.ResumeRead(); err != nil {
		t.Fatal(err)
	}
	if err := etRecv(t, sent, "the write"); err != nil {
		t.Fatal(err)
	}
	etWaitFor(t, "every byte", func() bool { return got.Load() == total })
}

// WaitOutput holds a writer while the peer does not read, and lets it go
// once the queue is under its bound; Close releases it with an error.
func TestWaitOutput(t *testing.T) { backendtest.Run(t, testWaitOutput) }

func testWaitOutput(t *testing.T) {
	h := etNewHandler()
	_, c, peer := etServe(t, h, engine.Options{}, "tcp")
	// Nothing queued yet (the conn holds no queue): any bound is met, a
	// negative one too.
	for _, n := range []int{-1, 0} {
		if err := c.WaitOutput(n, nil); err != nil {
			t.Fatalf("WaitOutput(%d) with nothing queued = %v, want nil", n, err)
		}
	}
	chunk := make([]byte, 1<<20)
	for c.OutboundBuffered() < 4<<20 {
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	waited := make(chan error, 1)
	go func() { waited <- c.WaitOutput(64<<10, nil) }()
	etNoEvent(t, waited, "WaitOutput's return while the peer reads nothing")
	go io.Copy(io.Discard, peer)
	if err := etRecv(t, waited, "WaitOutput"); err != nil {
		t.Fatalf("WaitOutput = %v once drained, want nil", err)
	}
	for c.OutboundBuffered() < 4<<20 {
		if _, err := c.Write(chunk); err != nil {
			break
		}
	}
	done := make(chan struct{})
	close(done)
	if err := c.WaitOutput(0, done); err == nil && c.OutboundBuffered() > 0 {
		t.Fatal("WaitOutput with done closed = nil, want its cancel error")
	}
}

// halfCloser is an etHandler that keeps half-closed connections open.
type halfCloser struct {
	*etHandler
	eof chan *engine.Conn
}

func (h *halfCloser) OnEOF(c *engine.Conn) engine.Action {
	h.eof <- c
	return engine.None
}

// A HalfCloser's connection stays open for writing after the peer's end
// of stream: the reply written afterwards arrives, then the close.
func TestHalfCloser(t *testing.T) { backendtest.Run(t, testHalfCloser) }

func testHalfCloser(t *testing.T) {
	h := &halfCloser{etHandler: etNewHandler(), eof: make(chan *engine.Conn, 1)}
	e, err := engine.New(h, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	defer etStop(t, e)
	a := etListen(t, e, "tcp")
	peer := etDial(t, a)
	io.WriteString(peer, "question")
	peer.(*net.TCPConn).CloseWrite()
	c := etRecv(t, h.eof, "OnEOF")
	if _, err := c.Write([]byte("answer")); err != nil {
		t.Fatalf("Write after the peer's EOF: %v", err)
	}
	c.Close()
	peer.SetReadDeadline(time.Now().Add(etWait))
	b, err := io.ReadAll(peer)
	if err != nil || !bytes.Equal(b, []byte("answer")) {
		t.Fatalf("peer read %q, %v; want the answer, then EOF", b, err)
	}
}

// AdoptWith gives the connection its Context before OnOpen.
func TestAdoptWithContext(t *testing.T) {
	h := etNewHandler()
	seen := make(chan any, 1)
	h.open = func(c *engine.Conn) ([]byte, engine.Action) {
		seen <- c.Context()
		return nil, engine.None
	}
	e := etStart(t, h, engine.Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	nc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AdoptWith(nc, engine.Adoption{Context: "state"}); err != nil {
		t.Fatal(err)
	}
	if v := etRecv(t, seen, "OnOpen"); v != "state" {
		t.Fatalf("Context in OnOpen = %v, want the Adoption's", v)
	}
	c := etOpened(t, h)
	c.Close()
}

// AdoptWith with ClientTLS handshakes as the client on the loop's pool
// before OnOpen, which sees the server's certificate; a server that fails
// the handshake closes the connection with no OnOpen.
func TestAdoptWithClientTLS(t *testing.T) {
	h := etNewHandler()
	states := make(chan tls.ConnectionState, 1)
	h.open = func(c *engine.Conn) ([]byte, engine.Action) {
		st, _ := c.ConnectionState()
		states <- st
		return []byte("ping"), engine.None
	}
	e := etStart(t, h, engine.Options{})
	pki := tlstest.Get()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", pki.ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b := make([]byte, 4)
		io.ReadFull(c, b)
		got <- string(b)
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AdoptWith(nc, engine.Adoption{ClientTLS: pki.ClientConfig()}); err != nil {
		t.Fatal(err)
	}
	if st := etRecv(t, states, "OnOpen"); !st.HandshakeComplete || len(st.PeerCertificates) == 0 {
		t.Fatalf("OnOpen's ConnectionState = %+v, want a completed client handshake", st)
	}
	if s := etRecv(t, got, "the server's read"); s != "ping" {
		t.Fatalf("server read %q, want ping (encrypted by the loop)", s)
	}
	etOpened(t, h).Close()
	if _, err := e.AdoptWith(nc, engine.Adoption{ClientTLS: pki.ClientConfig(), Input: []byte("x")}); err == nil {
		t.Error("AdoptWith ClientTLS with Input succeeded")
	}
}
