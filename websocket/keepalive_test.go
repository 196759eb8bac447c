package websocket_test

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// The keepalive tests run on real loop timers with short periods; their
// bounds leave a second of slack for a loaded machine.
const (
	kaInterval = 100 * time.Millisecond
	kaTimeout  = 150 * time.Millisecond
	kaSlack    = time.Second
)

func keepaliveOptions(h websocket.Handler) websocket.Options {
	return websocket.Options{Handler: h, PingInterval: kaInterval, PongTimeout: kaTimeout}
}

// TestKeepalivePings: a server pings a raw client that stays silent, at
// PingInterval, and pings it again at PingInterval once it answered.
func TestKeepalivePings(t *testing.T) { backendtest.Run(t, testKeepalivePings) }

func testKeepalivePings(t *testing.T) {
	rec := newRecorder(false)
	u := &websocket.Upgrader{Options: keepaliveOptions(rec)}
	url := serveWS(t, u, false)
	last := time.Now() // the server arms its first ping as it opens, before rawDial returns
	rc, _ := rawDial(t, url)
	rec.expect(t, "open")
	for i := range 3 {
		f, err := rc.read()
		if err != nil || f.op() != 0x9 {
			t.Fatalf("ping %d: read %v, %v; want a ping", i, f, err)
		}
		if gap := time.Since(last); gap < kaInterval*9/10 || gap > kaInterval+kaSlack {
			t.Errorf("ping %d came %v after the last input, want about %v", i, gap, kaInterval)
		}
		rc.frame(0x8A, true, f.payload) // the pong
		last = time.Now()
	}
}

// TestKeepaliveSilentPeer: a raw client that never answers is cut within
// PingInterval+PongTimeout, without a close frame, and OnClose gets
// ErrPongTimeout.
func TestKeepaliveSilentPeer(t *testing.T) { backendtest.Run(t, testKeepaliveSilentPeer) }

func testKeepaliveSilentPeer(t *testing.T) {
	rec := newRecorder(false)
	u := &websocket.Upgrader{Options: keepaliveOptions(rec)}
	rc, _ := rawDial(t, serveWS(t, u, false))
	rec.expect(t, "open")
	start := time.Now()
	f, err := rc.read()
	if err != nil || f.op() != 0x9 {
		t.Fatalf("read %v, %v; want a ping", f, err)
	}
	if f, err := rc.read(); err == nil {
		t.Fatalf("after the ping: frame %v, want the connection cut", f)
	}
	took := time.Since(start)
	ev := rec.expect(t, "close")
	if !errors.Is(ev.err, websocket.ErrPongTimeout) {
		t.Errorf("OnClose(%v), want ErrPongTimeout", ev.err)
	}
	if got := websocket.CloseStatus(ev.err); got != websocket.StatusAbnormalClosure {
		t.Errorf("CloseStatus(OnClose's error) = %d, want 1006", got)
	}
	if took > kaInterval+kaTimeout+kaSlack {
		t.Errorf("silent peer cut after %v, want at most %v", took, kaInterval+kaTimeout+kaSlack)
	}
}

// TestKeepaliveAnswered: a gale server pings a gale client, or the
// client the server, over ws and wss; the peer answers, and the
// connection stays open; the close handshake then runs as without
// keepalive.
func TestKeepaliveAnswered(t *testing.T) { backendtest.Run(t, testKeepaliveAnswered) }

func testKeepaliveAnswered(t *testing.T) {
	for _, secure := range []bool{false, true} {
		for _, pinger := range []string{"server", "client"} {
			name := map[bool]string{false: "ws", true: "wss"}[secure] + "/" + pinger
			t.Run(name, func(t *testing.T) { testKeepaliveAnsweredBy(t, secure, pinger == "server") })
		}
	}
}

func testKeepaliveAnsweredBy(t *testing.T, secure, serverPings bool) {
	srv, cli := newRecorder(false), newRecorder(false)
	so, co := websocket.Options{Handler: srv}, websocket.Options{Handler: cli}
	pinged := cli
	if serverPings {
		so = keepaliveOptions(srv)
	} else {
		co, pinged = keepaliveOptions(cli), srv
	}
	c := dial(t, &websocket.Dialer{Options: co}, serveWS(t, &websocket.Upgrader{Options: so}, secure))
	srv.expect(t, "open")
	cli.expect(t, "open")
	start := time.Now()
	for i := range 3 {
		if ev := pinged.next(t); ev.kind != "ping" {
			t.Fatalf("event %d: %s (%v), want a ping", i, ev.kind, ev.err)
		}
	}
	if took := time.Since(start); took > 3*kaInterval+kaSlack {
		t.Errorf("3 pings took %v, want about %v", took, 3*kaInterval)
	}
	c.Close(websocket.StatusNormalClosure, "")
	for _, r := range []*recorder{srv, cli} {
		ev := r.next(t)
		for ev.kind != "close" {
			ev = r.next(t)
		}
		if got := websocket.CloseStatus(ev.err); got != websocket.StatusNormalClosure {
			t.Errorf("OnClose(%v): status %d, want 1000", ev.err, got)
		}
	}
}

// TestKeepaliveClient: a Dialer's connection pings a server, and gives
// up one that does the handshake and then neither reads nor answers.
func TestKeepaliveClient(t *testing.T) { backendtest.Run(t, testKeepaliveClient) }

func testKeepaliveClient(t *testing.T) {
	cli := newRecorder(false)
	d := &websocket.Dialer{Options: keepaliveOptions(cli)}
	dial(t, d, silentServer(t))
	cli.expect(t, "open")
	start := time.Now()
	ev := cli.expect(t, "close")
	if !errors.Is(ev.err, websocket.ErrPongTimeout) {
		t.Errorf("OnClose(%v), want ErrPongTimeout", ev.err)
	}
	if took := time.Since(start); took > kaInterval+kaTimeout+kaSlack {
		t.Errorf("silent server given up after %v, want at most %v", took, kaInterval+kaTimeout+kaSlack)
	}
}

// silentServer accepts one connection, answers its handshake, then reads
// nothing until the test ends; it returns its ws:// URL.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done, stop := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { ln.Close(); close(stop); <-done })
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		nc.SetDeadline(time.Now().Add(testTimeout))
		req, err := http.ReadRequest(bufio.NewReader(nc))
		if err != nil {
			return
		}
		nc.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
			"Sec-WebSocket-Accept: " + accept(req.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n"))
		<-stop // reading nothing: the client's ping stays unread
	}()
	return "ws://" + ln.Addr().String() + "/"
}

// TestKeepaliveNoGoroutines: keepalive on many connections, pinging and
// answered, costs no goroutine on the loop backends (the net backend has
// goroutines by design).
func TestKeepaliveNoGoroutines(t *testing.T) { backendtest.Run(t, testKeepaliveNoGoroutines) }

func testKeepaliveNoGoroutines(t *testing.T) {
	if os.Getenv(poller.EnvBackend) == poller.Net.String() || runtime.GOOS == "windows" {
		// (On Windows httpd serves on the net backend: package backend's table.)
		t.Skip("the net backend holds a goroutine per connection by design")
	}
	h := &pingCounter{}
	srv := &websocket.Upgrader{Options: keepaliveOptions(h)}
	url := serveWS(t, srv, false)
	d := &websocket.Dialer{Options: keepaliveOptions(h)}
	const warm, n = 10, 50
	for range warm { // engines, loops and pools up
		dial(t, d, url)
	}
	before := settledGoroutines(0)
	for range n {
		dial(t, d, url)
	}
	// httpd's pool of handler goroutines may have grown by a worker or
	// two with the upgrades; a goroutine per connection would be n.
	opened := settledGoroutines(before)
	if opened >= before+n/10 {
		t.Errorf("%d goroutines with %d more connections, want about %d", opened, n, before)
	}
	for deadline := time.Now().Add(3*kaInterval + kaSlack); h.pings.Load() < 2*(warm+n); {
		if time.Now().After(deadline) {
			t.Fatalf("%d pings in %v, want %d", h.pings.Load(), 3*kaInterval+kaSlack, 2*(warm+n))
		}
		time.Sleep(kaInterval / 2)
	}
	if after := settledGoroutines(opened); after > opened {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines once %d connections pinged, want %d as before\n%s", after, warm+n, opened, buf[:runtime.Stack(buf, true)])
	}
	if s := srv.Stats(); s.Open != warm+n {
		t.Errorf("server Stats().Open = %d, want %d (none given up)", s.Open, warm+n)
	}
}

// pingCounter counts the pings its connections receive.
type pingCounter struct {
	websocket.BaseHandler
	pings atomic.Int64
}

func (h *pingCounter) OnPing(*websocket.Conn, []byte) { h.pings.Add(1) }

// settledGoroutines returns the goroutine count once it is at most want
// (or after 100 ms, when want is 0): a dial's helpers end just after it
// returns.
func settledGoroutines(want int) int {
	g := runtime.NumGoroutine()
	for i := 0; i < 50 && (want == 0 && i < 5 || want > 0 && g > want); i++ {
		time.Sleep(20 * time.Millisecond)
		g = runtime.NumGoroutine()
	}
	return g
}

// pauser pauses reading at its connection's first pong. (Not in OnOpen:
// a pause posted there may come before the resume httpd's handover
// posts.)
type pauser struct{ *recorder }

func (p pauser) OnPong(c *websocket.Conn, data []byte) {
	c.PauseRead()
	p.recorder.OnPong(c, data)
}

// TestKeepalivePausedRead: keepalive counts input read; a connection
// whose reading is paused reads no pong, and is cut as a silent one, as
// Options.PingInterval says. (The receive submitted before the pause
// still completes: another pong may be read.)
func TestKeepalivePausedRead(t *testing.T) { backendtest.Run(t, testKeepalivePausedRead) }

func testKeepalivePausedRead(t *testing.T) {
	rec := newRecorder(false)
	u := &websocket.Upgrader{Options: keepaliveOptions(pauser{rec})}
	rc, _ := rawDial(t, serveWS(t, u, false))
	rec.expect(t, "open")
	for {
		f, err := rc.read()
		if err != nil {
			break // cut
		}
		if f.op() == 0x9 {
			rc.frame(0x8A, true, f.payload) // the pong, which the server may not read
		}
	}
	ev := rec.next(t)
	for ev.kind == "pong" {
		ev = rec.next(t)
	}
	if ev.kind != "close" || !errors.Is(ev.err, websocket.ErrPongTimeout) {
		t.Errorf("event %s (%v), want close with ErrPongTimeout", ev.kind, ev.err)
	}
}
