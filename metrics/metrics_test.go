package metrics_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/metrics"
	"github.com/galeio/gale/websocket"
)

// testWait bounds every wait; reached only on a bug.
const testWait = 10 * time.Second

type echo struct{ engine.BaseHandler }

func (echo) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	c.Write(in.Bytes())
	in.Discard(in.Len())
	return engine.None
}

// startEcho starts a one-loop echo engine, stopped at the test's end.
func startEcho(t *testing.T) (*engine.Engine, net.Addr) { return startEchoTB(t) }

// startEchoTB is startEcho for tests and benchmarks.
func startEchoTB(t testing.TB) (*engine.Engine, net.Addr) {
	t.Helper()
	e, err := engine.New(echo{}, engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e, a
}

// echoClients opens n connections to a, each echoing size bytes once;
// they close at the test's end.
func echoClients(t *testing.T, a net.Addr, n, size int) {
	t.Helper()
	for range n {
		c, err := net.DialTimeout("tcp", a.String(), testWait)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(testWait))
		msg := strings.Repeat("m", size)
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, make([]byte, size)); err != nil {
			t.Fatal(err)
		}
	}
}

// scrape gets h's answer and parses it strictly.
func scrape(t *testing.T, h http.Handler) *exposition {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		t.Errorf("Content-Type = %q", ct)
	}
	x, err := parseExposition(rec.Body.String())
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, rec.Body.String())
	}
	return x
}

// expect checks x's series against want.
func expect(t *testing.T, x *exposition, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		got, ok := x.values[k]
		switch {
		case !ok:
			t.Errorf("no series %s", k)
		case got != v:
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
}

// TestEngineMetrics checks the engine's series against Stats after known
// traffic: N connections, each echoing a known number of bytes.
func TestEngineMetrics(t *testing.T) {
	e, a := startEcho(t)
	const n, size = 3, 1000
	echoClients(t, a, n, size)
	deadline := time.Now().Add(testWait)
	for e.Stats().Total().BytesOut < n*size && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond) // the loop counts a write after making it
	}
	x := scrape(t, metrics.Handler(metrics.Engine("echo", e)))
	l := `{loop="0",name="echo"}`
	expect(t, x, map[string]float64{
		"gale_engine_connections" + l:                                                 n,
		"gale_engine_received_bytes_total" + l:                                        n * size,
		"gale_engine_sent_bytes_total" + l:                                            n * size,
		"gale_engine_queued_bytes" + l:                                                0,
		"gale_engine_tls_handshakes" + l:                                              0,
		`gale_engine_errors_total{kind="reset",loop="0",name="echo"}`:                 0,
		`gale_engine_deadlines_total{kind="read",loop="0",name="echo"}`:               0,
		`gale_engine_limit_closes_total{limit="idle_timeout",loop="0",name="echo"}`:   0,
		"gale_engine_accepted_connections_total" + l:                                  n,
		`gale_engine_refused_connections_total{cap="max_conns",loop="0",name="echo"}`: 0,
	})
	for name, typ := range map[string]string{"gale_engine_connections": "gauge", "gale_engine_sent_bytes_total": "counter"} {
		if x.types[name] != typ {
			t.Errorf("TYPE of %s = %q, want %s", name, x.types[name], typ)
		}
	}
}

// TestHTTPAndWebSocketMetrics checks an httpd server's series, its
// loops' and a WebSocket Upgrader's after known traffic.
func TestHTTPAndWebSocketMetrics(t *testing.T) {
	up := &websocket.Upgrader{Options: websocket.Options{Handler: wsEcho{}}}
	srv, url := startHTTP(t, up)
	const n = 4
	for range n {
		res, err := http.Get("http://" + url + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	cli := &wsClient{got: make(chan string, 1)}
	d := &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: srvEngine(t)}}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	c, _, err := d.Dial(ctx, "ws://"+url+"/ws")
	if err != nil {
		t.Fatal(err)
	}
	c.WriteMessage(websocket.TextMessage, []byte("hello"))
	if got := recv(t, cli.got); got != "hello" {
		t.Fatalf("echo = %q", got)
	}
	x := scrape(t, metrics.Handler(metrics.HTTP("api", srv), metrics.WebSocket("ws", up), metrics.WebSocket("client", d)))
	expect(t, x, map[string]float64{
		`gale_http_requests_total{name="api",protocol="http1"}`: n + 1, // and the upgrade
		`gale_http_requests_total{name="api",protocol="http2"}`: 0,
		`gale_http_handlers_max{name="api"}`:                    0,
		`gale_http_upgraded_connections{name="api"}`:            1,
		`gale_websocket_connections{name="ws"}`:                 1,
		`gale_websocket_received_messages_total{name="ws"}`:     1,
		`gale_websocket_received_bytes_total{name="ws"}`:        5,
		`gale_websocket_sent_messages_total{name="ws"}`:         1,
		`gale_websocket_sent_bytes_total{name="client"}`:        5,
		`gale_websocket_received_messages_total{name="client"}`: 1,
	})
	st := srv.Stats().Engine.Total()
	if got := x.values[`gale_engine_received_bytes_total{loop="0",name="api"}`]; got != float64(st.BytesIn) || got == 0 {
		t.Errorf("gale_engine_received_bytes_total of the server's loop = %v, Stats says %d", got, st.BytesIn)
	}
	c.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(testWait)
	for up.Stats().Open > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	x = scrape(t, metrics.Handler(metrics.WebSocket("ws", up)))
	expect(t, x, map[string]float64{
		`gale_websocket_connections{name="ws"}`:              0,
		`gale_websocket_closes_total{code="1000",name="ws"}`: 1,
	})
}

type wsEcho struct{ websocket.BaseHandler }

func (wsEcho) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	c.WriteMessage(typ, data)
}

type wsClient struct {
	websocket.BaseHandler
	got chan string
}

func (w *wsClient) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	w.got <- string(data)
}

func recv(t *testing.T, ch chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(testWait):
		t.Fatal("nothing received")
		return ""
	}
}

// srvEngine returns an engine for dialed WebSocket connections, stopped
// at the test's end.
func srvEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// startHTTP serves "/" (a short answer) and "/ws" (up) with a one-loop
// httpd.Server, closed at the test's end, and returns it and its address.
func startHTTP(t *testing.T, up *websocket.Upgrader) (*httpd.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) { up.Upgrade(w, r, nil) })
	srv := &httpd.Server{Handler: mux, Engine: engine.Options{Loops: 1}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return srv, ln.Addr().String()
}

// TestLabelEscaping checks that a name with the characters the format
// escapes comes back whole.
func TestLabelEscaping(t *testing.T) {
	e, _ := startEcho(t)
	name := "a \"quoted\" \\ back\nslash"
	x := scrape(t, metrics.Handler(metrics.Engine(name, e)))
	key := seriesKey("gale_engine_connections", map[string]string{"name": name, "loop": "0"})
	if _, ok := x.values[key]; !ok {
		t.Errorf("no series %s", key)
	}
}

// TestDuplicateNames checks that two sources of one name are refused.
func TestDuplicateNames(t *testing.T) {
	e, _ := startEcho(t)
	defer func() {
		if recover() == nil {
			t.Error("Handler with two sources named x did not panic")
		}
	}()
	metrics.Handler(metrics.Engine("x", e), metrics.HTTP("x", &httpd.Server{}))
}

// TestVar checks that the expvar value is valid JSON with each source's
// Stats under its kind and name, and that an unstarted server reads as
// zeros.
func TestVar(t *testing.T) {
	e, a := startEcho(t)
	echoClients(t, a, 1, 10)
	v := metrics.Var(metrics.Engine("echo", e), metrics.HTTP("idle", &httpd.Server{}), metrics.WebSocket("ws", &websocket.Upgrader{}))
	s := v.String()
	if !json.Valid([]byte(s)) {
		t.Fatalf("Var().String() is not JSON: %s", s)
	}
	var got struct {
		Engine    map[string]engine.Stats    `json:"engine"`
		HTTP      map[string]httpd.Stats     `json:"http"`
		WebSocket map[string]websocket.Stats `json:"websocket"`
	}
	if err := json.Unmarshal([]byte(s), &got); err != nil {
		t.Fatalf("Unmarshal(%s): %v", s, err)
	}
	if l := got.Engine["echo"].Loops; len(l) != 1 || l[0].Conns != 1 || l[0].BytesIn != 10 {
		t.Errorf("engine echo = %+v, want one loop, one connection, 10 bytes in", got.Engine["echo"])
	}
	if _, ok := got.HTTP["idle"]; !ok {
		t.Errorf("no http idle in %s", s)
	}
	if _, ok := got.WebSocket["ws"]; !ok {
		t.Errorf("no websocket ws in %s", s)
	}
}

// TestConcurrentScrapes scrapes from several goroutines while
// connections come and go: run with -race.
func TestConcurrentScrapes(t *testing.T) {
	e, a := startEcho(t)
	h := metrics.Handler(metrics.Engine("echo", e))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				if _, err := parseExposition(rec.Body.String()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for range 10 {
		c, err := net.DialTimeout("tcp", a.String(), testWait)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	wg.Wait()
}
