package websocket_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/tlstest"
	"github.com/galeio/gale/websocket"
)

const testTimeout = 10 * time.Second

// event is what a recorder saw.
type event struct {
	kind string // "open", "msg", "close", "ping", "pong"
	typ  websocket.MessageType
	data string
	err  error
}

// recorder is a Handler that reports every event on a channel, and
// echoes messages when echo is set.
type recorder struct {
	echo   bool
	events chan event
}

func newRecorder(echo bool) *recorder { return &recorder{echo: echo, events: make(chan event, 1024)} }

func (r *recorder) OnOpen(c *websocket.Conn) { r.events <- event{kind: "open"} }
func (r *recorder) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	if r.echo {
		c.WriteMessage(typ, data)
	}
	r.events <- event{kind: "msg", typ: typ, data: string(data)}
}
func (r *recorder) OnClose(c *websocket.Conn, err error) { r.events <- event{kind: "close", err: err} }
func (r *recorder) OnPing(c *websocket.Conn, data []byte) {
	r.events <- event{kind: "ping", data: string(data)}
}
func (r *recorder) OnPong(c *websocket.Conn, data []byte) {
	r.events <- event{kind: "pong", data: string(data)}
}

// next returns the next event, failing the test after testTimeout.
func (r *recorder) next(t testing.TB) event {
	t.Helper()
	select {
	case ev := <-r.events:
		return ev
	case <-time.After(testTimeout):
		t.Fatal("no event within the timeout")
		return event{}
	}
}

// expect reads the next event and checks its kind (and, for "msg", its
// data).
func (r *recorder) expect(t testing.TB, kind string, data ...string) event {
	t.Helper()
	ev := r.next(t)
	if ev.kind != kind || len(data) > 0 && ev.data != data[0] {
		t.Fatalf("event = %s %.60q (%v), want %s %.60q", ev.kind, ev.data, ev.err, kind, data)
	}
	return ev
}

// testEngine returns an engine for a test's adopted and dialed
// connections, stopped at its end.
func testEngine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// serveWS serves u at /ws with httpd.Server (TLS when secure) and returns
// its ws:// or wss:// URL. The server is closed at the test's end.
func serveWS(t testing.TB, u *websocket.Upgrader, secure bool) string {
	t.Helper()
	return serveWSLoops(t, u, secure, 2)
}

// serveWSLoops is serveWS on a server with the given number of loops.
func serveWSLoops(t testing.TB, u *websocket.Upgrader, secure bool, loops int) string {
	t.Helper()
	var mu sync.Mutex
	var conns []*websocket.Conn
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := u.Upgrade(w, r, nil)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	s := &httpd.Server{Handler: mux, Engine: engine.Options{Loops: loops}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	scheme := "ws"
	if secure {
		s.TLSConfig = tlstest.Get().ServerConfig()
		scheme = "wss"
		go s.ServeTLS(ln, "", "")
	} else {
		go s.Serve(ln)
	}
	t.Cleanup(func() { s.Close() })
	return scheme + "://" + ln.Addr().String() + "/ws"
}

// dial dials url with d (its Engine set to a test engine when nil).
func dial(t testing.TB, d *websocket.Dialer, url string) *websocket.Conn {
	t.Helper()
	if d.Engine == nil {
		d.Engine = testEngine(t)
	}
	if d.TLSConfig == nil {
		d.TLSConfig = tlstest.Get().ClientConfig()
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, _, err := d.Dial(ctx, url)
	if err != nil {
		t.Fatalf("Dial(%s): %v", url, err)
	}
	return c
}

var _ = tls.VersionTLS13

func engineOptions() engine.Options { return engine.Options{Loops: 1} }

// signal is a Handler that echoes (server) or signals each message
// (client), allocation-free.
type signal struct {
	websocket.BaseHandler
	echo bool
	got  chan int
}

func (s *signal) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	if s.echo {
		c.WriteMessage(typ, data)
		return
	}
	s.got <- len(data)
}
