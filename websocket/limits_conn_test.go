package websocket_test

import (
	"bufio"
	"bytes"
	"compress/flate"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/testkit/tlstest"
	"github.com/galeio/gale/websocket"
)

// close-timeout: after Close, a connection waits for the peer's close
// frame for CloseTimeout (5 s by default), whatever else the peer sends
// meanwhile, on a timer of its loop's; then it is cut, with
// ErrCloseTimeout.
func limitCloseTimeout(t *testing.T) {
	if websocket.DefaultCloseTimeoutForTest != 5*time.Second {
		t.Errorf("the default CloseTimeout is %v, want 5s as documented", websocket.DefaultCloseTimeoutForTest)
	}
	const timeout = 300 * time.Millisecond
	h, url := limitServer(t, websocket.Options{CloseTimeout: timeout}, nil)
	rc, sc := hostile(t, h, url)
	start := time.Now()
	rc.frame(0x81, true, []byte("close"))
	if f, err := rc.read(); err != nil || f.op() != 8 {
		t.Fatalf("read %s, %v; want the server's close frame", brief(f), err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // pings, never the close frame
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := rc.nc.Write(rawFrame(0x89, true, nil)); err != nil {
				return
			}
		}
	}()
	timer := false // the wait's, armed on the loop once Close's task ran
	for end := time.Now().Add(servedWithin); !timer && time.Now().Before(end); time.Sleep(time.Millisecond) {
		timer = sc.Engine().Stats().Total().Timers > 0
	}
	if !timer {
		t.Error("no timer on the loop during the close handshake, want its one")
	}
	served(t, url)
	if err := closeOf(t, sc, 10*timeout); !errors.Is(err, websocket.ErrCloseTimeout) {
		t.Errorf("OnClose(%v), want ErrCloseTimeout", err)
	}
	if d := time.Since(start); d < timeout {
		t.Errorf("closed after %v, before CloseTimeout (%v)", d, timeout)
	}
}

// close-unread: a connection the peer ends (a close frame, a protocol
// error, the end of its stream) closes once its queued output is
// written: a peer that does not read holds that output for CloseTimeout
// at most, then the connection is cut. (WriteHighWater is raised here so
// that the peer is read while the queue holds megabytes.)
func limitCloseUnread(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := &httpd.Server{Engine: engine.Options{WriteHighWater: 32 << 20, MaxWriteBuffer: 64 << 20}}
	h, url := limitServer(t, websocket.Options{CloseTimeout: timeout}, srv)
	h.flood.Store(8 << 20) // more than the kernel's socket buffers take
	for _, tc := range []struct {
		name string
		end  func(rc *rawConn)
	}{
		{"close frame", func(rc *rawConn) { rc.frame(0x88, true, closePayload(1000, "")) }},
		{"protocol error", func(rc *rawConn) { rc.frame(0x83, true, nil) }},
		{"end of stream", func(rc *rawConn) { rc.nc.(*net.TCPConn).CloseWrite() }},
	} {
		rc, sc := hostile(t, h, url)
		rc.frame(0x81, true, []byte("flood"))
		for by := time.Now().Add(testTimeout); sc.Buffered() < 1<<20; time.Sleep(time.Millisecond) {
			if time.Now().After(by) {
				t.Fatalf("%s: %d bytes queued for a peer that does not read", tc.name, sc.Buffered())
			}
		}
		tc.end(rc)
		served(t, url)
		closeOf(t, sc, 10*timeout) // fails the test if the connection stays
		if q := sc.Buffered(); q != 0 {
			t.Errorf("%s: %d bytes still queued after the close", tc.name, q)
		}
	}
}

// takeover-window: a connection keeps a window of what it received only
// with CompressionContextTakeover, and the peer's: 2^client_max_window_bits
// bytes (32 KiB at most), however much it is sent.
func limitTakeoverWindow(t *testing.T) {
	h, url := limitServer(t, websocket.Options{Compression: websocket.CompressionContextTakeover}, nil)
	for _, tc := range []struct {
		offer string
		level int
		want  int
	}{
		{"permessage-deflate", flate.BestSpeed, 32 << 10},
		{"permessage-deflate; client_max_window_bits=10", flate.HuffmanOnly, 1 << 10}, // (HuffmanOnly never refers back)
	} {
		rc, sc := hostile(t, h, url, "Sec-WebSocket-Extensions: "+tc.offer)
		d := newDeflater(tc.level)
		for i := range 8 {
			msg := bytes.Repeat([]byte(fmt.Sprintf("message %d; ", i)), 1500)
			rc.frame(0xc2, true, d.message(msg))
			if f, err := rc.read(); err != nil || string(f.payload) != fmt.Sprint("got ", len(msg)) {
				t.Fatalf("%s: message %d: %s, %v", tc.offer, i, brief(f), err)
			}
		}
		if n := websocket.WindowCapForTest(sc); n != tc.want {
			t.Errorf("%s: window of %d bytes after 8 x 16 KiB, want %d", tc.offer, n, tc.want)
		}
	}
	served(t, url)
	h, url = limitServer(t, websocket.Options{Compression: websocket.CompressionEnabled}, nil)
	rc, sc := hostile(t, h, url, "Sec-WebSocket-Extensions: permessage-deflate")
	rc.frame(0xc2, true, newDeflater(flate.BestSpeed).message(make([]byte, 4096)))
	rc.read()
	if n := websocket.WindowCapForTest(sc); n != -1 {
		t.Errorf("CompressionEnabled: window of %d bytes, want none", n)
	}
}

// idle: nothing closes a connection that sends nothing, or stops
// mid-frame (no ping, no timeout, as with gorilla's and net/http's
// hijacked connections); the engine's ReadIdleTimeout, when set, does.
func limitIdle(t *testing.T) {
	h, url := limitServer(t, websocket.Options{}, nil)
	_, sc := hostile(t, h, url)
	served(t, url)
	select {
	case err := <-sc.Context().(chan error):
		t.Fatalf("an idle connection closed (%v) with no timeout set", err)
	case <-time.After(300 * time.Millisecond):
	}
	const timeout = 300 * time.Millisecond
	h, url = limitServer(t, websocket.Options{}, &httpd.Server{Engine: engine.Options{ReadIdleTimeout: timeout}})
	rc, sc := hostile(t, h, url)
	rc.send([]byte{0x81}) // a frame begun
	served(t, url)
	if err := closeOf(t, sc, 10*timeout); !errors.Is(err, engine.ErrIdleTimeout) {
		t.Errorf("OnClose(%v), want engine.ErrIdleTimeout", err)
	}
}

// conn-cost: an upgraded connection costs no goroutine, its descriptor
// (two on the net backend, whose package net keeps a duplicate) and no
// timer, on httpd and (plain) under net/http alike; a TLS connection that
// net/http terminated is relayed by two goroutines through a socket pair.
func limitConnCost(t *testing.T) {
	const n = 50
	onNet := 0
	if backendtest.NetSocketsOnNet() { // httpd's and net/http's conns
		onNet = 1 // package net's goroutine reading each connection
	}
	refs := backendtest.SocketRefs()
	for _, tc := range []struct {
		name            string
		goroutines, fds int // per connection, the server's
	}{
		{"httpd ws", onNet, refs},
		{"httpd wss", onNet, refs},
		{"net/http ws", onNet, refs},
		{"net/http wss", 2 + onNet, 1 + refs + 1}, // the TLS socket, the pair's end on the loop, its other end
	} {
		url, tlsConf, stats := connCostServer(t, tc.name)
		servedWith(t, url, tlsConf) // the server's goroutines and buffers are made
		g0 := steadyGoroutines()
		fds0, fdsOK := openFDs()
		timers0 := stats().Timers
		for range n {
			rawDialWith(t, url, rawOptions{tls: tlsConf})
		}
		servedWith(t, url, tlsConf)
		if g := steadyGoroutines() - g0; g > n*tc.goroutines+n/10 {
			t.Errorf("%s: %d connections made %d goroutines, want %d each", tc.name, n, g, tc.goroutines)
		}
		if fds, ok := openFDs(); ok && fdsOK && fds-fds0 > n*(1+tc.fds)+5 {
			t.Errorf("%s: %d connections opened %d descriptors, want %d each (and the client's)", tc.name, n, fds-fds0, tc.fds)
		}
		if timers := stats().Timers; timers > timers0 {
			t.Errorf("%s: %d connections armed %d timers, want none", tc.name, n, timers-timers0)
		}
	}
}

// connCostServer serves a limitHandler for conn-cost's case name (httpd
// or net/http, ws or wss) and returns its URL, the TLS configuration of
// its clients and its connections' engine's counters.
func connCostServer(t *testing.T, name string) (url string, cfg *tls.Config, stats func() engine.LoopStats) {
	h := &limitHandler{conns: make(chan *websocket.Conn, 1024)}
	u := &websocket.Upgrader{Options: websocket.Options{Handler: h}}
	var e atomic.Pointer[engine.Engine]
	h2 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := u.Upgrade(w, r, nil); err == nil {
			e.Store(c.Engine())
		}
	})
	stats = func() engine.LoopStats { // once a connection was served
		if e := e.Load(); e != nil {
			return e.Stats().Total()
		}
		t.Fatal("no connection served yet")
		return engine.LoopStats{}
	}
	switch name {
	case "httpd ws", "httpd wss":
		srv := &httpd.Server{Handler: h2, Engine: engine.Options{Loops: 1}, ErrorLog: log.New(io.Discard, "", 0)}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url = "ws://" + ln.Addr().String() + "/ws"
		if name == "httpd wss" {
			srv.TLSConfig = tlstest.Get().ServerConfig()
			cfg = tlstest.Get().ClientConfig()
			url = "wss://" + ln.Addr().String() + "/ws"
			go srv.ServeTLS(ln, "", "")
		} else {
			go srv.Serve(ln)
		}
		t.Cleanup(func() { srv.Close() })
		return url, cfg, stats
	}
	eng, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Stop() })
	u.Engine = eng
	var hs *httptest.Server
	if name == "net/http wss" {
		hs = httptest.NewTLSServer(h2)
		pool := x509.NewCertPool()
		pool.AddCert(hs.Certificate())
		cfg = &tls.Config{RootCAs: pool, ServerName: "example.com"} // httptest's certificate names it
		url = "wss://" + hs.Listener.Addr().String() + "/ws"
	} else {
		hs = httptest.NewServer(h2)
		url = "ws://" + hs.Listener.Addr().String() + "/ws"
	}
	t.Cleanup(hs.Close)
	return url, cfg, stats
}

// openFDs counts the process's open descriptors, where it can.
func openFDs() (int, bool) {
	fds, ok := leaktest.OpenFDs()
	return len(fds), ok
}

// upgrade-head: the upgrade request is read by httpd (or net/http) before
// Upgrade sees it: a head past MaxHeaderBytes (1 MiB, and 4 KiB of
// slack) is answered 431 and closed, and one that trickles is held, on
// the loop, until ReadHeaderTimeout (none by default, as in net/http).
// The two are sent to two servers, the first without ReadHeaderTimeout:
// on a busy machine the 2 MiB head took longer than the timeout to pass
// the limit, and the timeout closed it first, without a 431.
func limitUpgradeHead(t *testing.T) {
	const timeout = 300 * time.Millisecond
	_, url := limitServer(t, websocket.Options{}, nil)
	host := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws")
	head := "GET /ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	big, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.SetDeadline(time.Now().Add(testTimeout))
	go func() {
		io.WriteString(big, head)
		line := "X-Pad: " + strings.Repeat("p", 1000) + "\r\n"
		for range 2048 { // 2 MiB
			if _, err := io.WriteString(big, line); err != nil {
				return
			}
		}
	}()
	// The 431 is read as it comes: the server resets the connection once
	// it has lingered 500 ms with the rest of the head unread, and the
	// reset takes what the client has not read yet.
	type response struct {
		resp *http.Response
		err  error
	}
	refused := make(chan response, 1)
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(big), nil)
		refused <- response{resp, err}
	}()
	served(t, url)
	if r := <-refused; r.err != nil || r.resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge { // big's deadline bounds the wait
		t.Errorf("a 2 MiB upgrade request: %v, %v; want 431", r.resp, r.err)
	}

	_, url = limitServer(t, websocket.Options{}, &httpd.Server{ReadHeaderTimeout: timeout})
	slow, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws"))
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.SetDeadline(time.Now().Add(testTimeout))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			if _, err := slow.Write([]byte{head[i%len(head)]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	served(t, url)
	start := time.Now()
	// The server closes it, at the end of its stream or with a reset (a
	// byte that came after the timeout went unread).
	if _, err := io.Copy(io.Discard, slow); errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) > 10*timeout {
		t.Errorf("an upgrade request that trickles: %v after %v, want closed after ReadHeaderTimeout", err, time.Since(start))
	}
}
