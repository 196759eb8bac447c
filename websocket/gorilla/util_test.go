package gorilla_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
	"github.com/galeio/gale/websocket/gorilla"
)

// wait bounds every wait of the tests.
const wait = 10 * time.Second

// testEngine returns an engine for a test's connections, stopped at its
// end (after the servers, which the cleanups close first).
func testEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// serve runs handle for each connection u upgrades, on a net/http test
// server, and returns its ws:// URL and a dialer on e. The connection is
// closed when handle returns.
func serve(t *testing.T, u *gorilla.Upgrader, handle func(c *gorilla.Conn)) (string, *gorilla.Dialer) {
	t.Helper()
	e := testEngine(t)
	u.Engine = e
	done := make(chan struct{}, 16)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := u.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer func() { done <- struct{}{} }()
		defer c.Close()
		handle(c)
	}))
	t.Cleanup(s.Close)
	return "ws" + strings.TrimPrefix(s.URL, "http"), &gorilla.Dialer{Engine: e, HandshakeTimeout: wait}
}

// dial dials url with d; the connection is closed at the test's end.
func dial(t *testing.T, d *gorilla.Dialer, url string) *gorilla.Conn {
	t.Helper()
	c, resp, err := d.Dial(url, nil)
	if err != nil {
		t.Fatalf("Dial(%s) = %v, %v", url, resp, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// echo is a server that sends back every message, through NextReader and
// NextWriter, until a read fails.
func echo(c *gorilla.Conn) {
	for {
		typ, r, err := c.NextReader()
		if err != nil {
			return
		}
		w, err := c.NextWriter(typ)
		if err != nil {
			return
		}
		if _, err := copyAll(w, r); err != nil {
			return
		}
		if err := w.Close(); err != nil {
			return
		}
	}
}
