package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/websocket"
)

// TestMain fails the run if the tests leave goroutines or descriptors
// behind.
func TestMain(m *testing.M) { leaktest.Main(m) }

// testTimeout bounds every wait of the tests but the browser's.
const testTimeout = 10 * time.Second

// startServer serves a chat room on a free loopback port, in this
// process, until the test ends; setup, if given, changes the room first.
// It returns the server and its address.
func startServer(t *testing.T, setup ...func(*room)) (*httpd.Server, string) {
	t.Helper()
	r := newRoom(testLogger(t))
	for _, f := range setup {
		f(r)
	}
	srv := newServer(r)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
			srv.Close()
		}
		if err := <-served; err != httpd.ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, ln.Addr().String()
}

// testLogger returns a logger that writes to the test's log while the
// test runs.
func testLogger(t *testing.T) *log.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.stop) // first registered, so run last
	return log.New(w, "", 0)
}

type testWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log("server: " + strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// clientEngine returns an engine for the test's WebSocket clients,
// stopped when the test ends (the default engine would never stop, and
// the leak check would see its loops).
func clientEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatalf("websocket.NewEngine: %v", err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// client is a chat client of the tests: what the server sends it is
// decoded and queued on events.
type client struct {
	t      *testing.T
	name   string // the nickname it joined as
	conn   *websocket.Conn
	events chan event
	closed chan struct{} // closed after OnClose
	err    error         // OnClose's, set before closed is closed
	// overflow is set when an event found events full, and was lost.
	overflow atomic.Bool
}

// dial connects to the chat at addr, with compression offered.
func dial(t *testing.T, e *engine.Engine, addr string) *client {
	t.Helper()
	c := &client{t: t, events: make(chan event, 1024), closed: make(chan struct{})}
	d := websocket.Dialer{Options: websocket.Options{
		Handler:     c,
		Compression: websocket.CompressionEnabled,
		Engine:      e,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, resp, err := d.Dial(ctx, "ws://"+addr+"/ws")
	if err != nil {
		t.Fatalf("Dial: %v (response %v)", err, resp)
	}
	c.conn = conn
	t.Cleanup(func() { conn.CloseNow() })
	return c
}

func (c *client) OnOpen(*websocket.Conn) {}

func (c *client) OnMessage(_ *websocket.Conn, typ websocket.MessageType, data []byte) {
	var e event
	if typ != websocket.TextMessage || json.Unmarshal(data, &e) != nil {
		e = event{Type: fmt.Sprintf("undecodable %v message %q", typ, data)}
	}
	select {
	case c.events <- e:
	default:
		c.overflow.Store(true) // never block the loop
	}
}

func (c *client) OnClose(_ *websocket.Conn, err error) {
	c.err = err
	close(c.closed)
}

// send sends e.
func (c *client) send(e event) {
	c.t.Helper()
	c.sendRaw(encode(e))
}

// sendRaw sends data as a text message.
func (c *client) sendRaw(data []byte) {
	c.t.Helper()
	if err := c.conn.WriteMessage(websocket.TextMessage, data); err != nil {
		c.t.Fatalf("WriteMessage: %v", err)
	}
}

// next returns the next event.
func (c *client) next() event {
	c.t.Helper()
	if c.overflow.Load() {
		c.t.Fatal("events were lost: more than the channel holds")
	}
	select {
	case e := <-c.events:
		return e
	case <-c.closed:
		// Events queued before the close come first.
		select {
		case e := <-c.events:
			return e
		default:
		}
		c.t.Fatalf("closed (%v) while waiting for an event", c.err)
	case <-time.After(testTimeout):
		c.t.Fatal("no event in time")
	}
	return event{}
}

// expect reads an event for each of want, which must be it.
func (c *client) expect(want ...event) {
	c.t.Helper()
	for _, w := range want {
		if got := c.next(); got != w {
			c.t.Fatalf("got %+v, want %+v", got, w)
		}
	}
}

// expectClose waits for the connection to close, and checks it was
// closed with a close frame with code and reason (any reason if "").
func (c *client) expectClose(code websocket.StatusCode, reason string) {
	c.t.Helper()
	select {
	case <-c.closed:
	case <-time.After(testTimeout):
		c.t.Fatalf("not closed in time; want %d %q", code, reason)
	}
	var ce *websocket.CloseError
	if !errors.As(c.err, &ce) || ce.Code != code || reason != "" && ce.Reason != reason {
		c.t.Fatalf("closed with %v; want a close frame %d %q", c.err, code, reason)
	}
}

// join dials addr and joins as nick; the server is expected to keep the
// nickname as want, and to say that here are already there.
func join(t *testing.T, e *engine.Engine, addr, nick, want string, here ...string) *client {
	t.Helper()
	c := dial(t, e, addr)
	c.send(event{Type: "join", Nick: nick})
	c.expect(event{Type: "welcome", Nick: want, Text: strings.Join(here, ", ")})
	c.name = want
	if !c.conn.Compressed() {
		t.Errorf("%s: permessage-deflate was not agreed on", want)
	}
	return c
}

// TestChat runs a conversation between three clients: joins, messages
// sent at once by all three and received by each in the same order, and
// a leave.
func TestChat(t *testing.T) {
	_, addr := startServer(t)
	e := clientEngine(t)

	ann := join(t, e, addr, "ann", "ann")
	ben := join(t, e, addr, "  ben\t", "ben", "ann")
	ann.expect(event{Type: "join", Nick: "ben"})
	cat := join(t, e, addr, "Cât 🐈", "Cât 🐈", "ann", "ben")
	ann.expect(event{Type: "join", Nick: "Cât 🐈"})
	ben.expect(event{Type: "join", Nick: "Cât 🐈"})
	clients := []*client{ann, ben, cat}

	// Each sends its messages while the others send theirs; every other
	// message is long and repetitive, so compressed both ways.
	const n = 40
	sent := make(map[string][]string)
	for _, c := range clients {
		nick := c.name
		for i := range n {
			text := fmt.Sprintf("%s's message %d", nick, i)
			if i%2 == 1 {
				text += ": " + strings.Repeat("la ", 100) + "é"
			}
			sent[nick] = append(sent[nick], text)
		}
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for _, text := range sent[c.name] {
				if err := c.conn.WriteMessage(websocket.TextMessage, encode(event{Type: "msg", Text: text})); err != nil {
					t.Errorf("WriteMessage: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	var first []event
	for _, c := range clients {
		got := make([]event, 3*n)
		for i := range got {
			got[i] = c.next()
		}
		checkOrder(t, c.name, got, sent)
		if first == nil {
			first = got
		} else if !slices.Equal(got, first) {
			t.Errorf("%s and %s got the messages in different orders", clients[0].name, c.name)
		}
	}

	// Leaving: with a close frame, or by dropping the connection.
	ben.conn.Close(websocket.StatusNormalClosure, "bye")
	ben.expectClose(websocket.StatusNormalClosure, "") // the server's answer
	ann.expect(event{Type: "leave", Nick: "ben"})
	cat.expect(event{Type: "leave", Nick: "ben"})
	cat.conn.CloseNow()
	ann.expect(event{Type: "leave", Nick: "Cât 🐈"})
	ann.send(event{Type: "msg", Text: "alone"})
	ann.expect(event{Type: "msg", Nick: "ann", Text: "alone"})
}

// checkOrder checks that got holds every message of sent, each sender's
// in the order sent.
func checkOrder(t *testing.T, who string, got []event, sent map[string][]string) {
	t.Helper()
	next := make(map[string]int)
	for _, e := range got {
		texts := sent[e.Nick]
		i := next[e.Nick]
		if e.Type != "msg" || i >= len(texts) || e.Text != texts[i] {
			t.Fatalf("%s got %+v; want message %d of %q", who, e, i, e.Nick)
		}
		next[e.Nick]++
	}
	for nick, texts := range sent {
		if next[nick] != len(texts) {
			t.Fatalf("%s got %d of %s's %d messages", who, next[nick], nick, len(texts))
		}
	}
}

// TestRefusals sends what the page never sends: each closes the
// connection with a close frame that says why.
func TestRefusals(t *testing.T) {
	_, addr := startServer(t)
	e := clientEngine(t)
	long := strings.Repeat("x", maxText+1)
	for _, tc := range []struct {
		name   string
		joined bool   // join first, as "ann"
		send   string // a text message
		binary bool   // send it as a binary message instead
		code   websocket.StatusCode
		reason string
	}{
		{"binary", false, `{"type":"join","nick":"ann"}`, true, websocket.StatusUnsupportedData, errNotText.Error()},
		{"not JSON", false, `join ann`, false, statusWrong, errNotJSON.Error()},
		{"not an object", false, `["join","ann"]`, false, statusWrong, errNotJSON.Error()},
		{"unknown type", false, `{"type":"who"}`, false, statusWrong, errType.Error()},
		{"message first", false, `{"type":"msg","text":"hi"}`, false, statusWrong, errNotIn.Error()},
		{"no nickname", false, `{"type":"join"}`, false, statusWrong, errNick.Error()},
		{"blank nickname", false, `{"type":"join","nick":" \t\u0007"}`, false, statusWrong, errNick.Error()},
		{"long nickname", false, `{"type":"join","nick":"` + strings.Repeat("é", maxNick+1) + `"}`, false, statusWrong, errNick.Error()},
		{"join twice", true, `{"type":"join","nick":"bob"}`, false, statusWrong, errTwice.Error()},
		{"long message", true, `{"type":"msg","text":"` + long + `"}`, false, statusWrong, errText.Error()},
		{"past the read limit", true, `{"type":"msg","text":"` + strings.Repeat("x", readLimit) + `"}`, false, websocket.StatusMessageTooBig, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c *client
			if tc.joined {
				c = join(t, e, addr, "ann", "ann")
			} else {
				c = dial(t, e, addr)
			}
			typ := websocket.TextMessage
			if tc.binary {
				typ = websocket.BinaryMessage
			}
			if err := c.conn.WriteMessage(typ, []byte(tc.send)); err != nil {
				t.Fatal(err)
			}
			c.expectClose(tc.code, tc.reason)
		})
	}

	// An empty message is no mistake: it is dropped.
	ann := join(t, e, addr, "ann", "ann")
	ann.send(event{Type: "msg", Text: " \n "})
	ann.send(event{Type: "msg", Text: "a\tb\r\nc"})
	ann.expect(event{Type: "msg", Nick: "ann", Text: "abc"})
}

// TestJoinTimeout: a connection that does not join in time is closed.
func TestJoinTimeout(t *testing.T) {
	_, addr := startServer(t, func(r *room) { r.joinTimeout = 200 * time.Millisecond })
	e := clientEngine(t)
	ann := join(t, e, addr, "ann", "ann")
	idle := dial(t, e, addr)
	idle.expectClose(statusWrong, errNoJoin.Error())
	ann.send(event{Type: "msg", Text: "still here"})
	ann.expect(event{Type: "msg", Nick: "ann", Text: "still here"})
}

// TestShutdown: the server's Shutdown closes every WebSocket with 1001
// "server restarting", and returns once they have answered.
func TestShutdown(t *testing.T) {
	srv, addr := startServer(t)
	e := clientEngine(t)
	ann := join(t, e, addr, "ann", "ann")
	ben := join(t, e, addr, "ben", "ben", "ann")
	ann.expect(event{Type: "join", Nick: "ben"})
	lurker := dial(t, e, addr) // not joined yet

	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	t.Logf("Shutdown took %v", time.Since(start))
	for _, c := range []*client{ann, ben, lurker} {
		c.expectClose(websocket.StatusGoingAway, reasonRestart)
	}
	// Nobody was told of the others leaving: they were all going.
	for _, c := range []*client{ann, ben} {
		select {
		case ev := <-c.events:
			t.Errorf("%s got %+v after the shutdown began", c.name, ev)
		default:
		}
	}
}

// TestPage: the page is served at /, and /ws refuses what is not a
// WebSocket handshake from the page's origin.
func TestPage(t *testing.T) {
	_, addr := startServer(t)
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: testTimeout}
	defer hc.CloseIdleConnections()
	get := func(path string, header http.Header) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("GET", "http://"+addr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}

	resp, body := get("/", nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, "new WebSocket(") {
		t.Errorf("GET /: %s, %q, %.80q...", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	if resp, _ := get("/nothing", nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /nothing: %s", resp.Status)
	}
	if resp, _ := get("/ws", nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /ws without a handshake: %s, want 400", resp.Status)
	}
	handshake := http.Header{
		"Connection":            {"Upgrade"},
		"Upgrade":               {"websocket"},
		"Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key":     {"dGhlIHNhbXBsZSBub25jZQ=="},
		"Origin":                {"http://elsewhere.example"},
	}
	if resp, _ := get("/ws", handshake); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /ws from another origin: %s, want 403", resp.Status)
	}

	// The page's own origin is let in.
	c := &client{t: t, events: make(chan event, 8), closed: make(chan struct{})}
	d := websocket.Dialer{
		Options: websocket.Options{Handler: c, Engine: clientEngine(t)},
		Header:  http.Header{"Origin": {"http://" + addr}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, _, err := d.Dial(ctx, "ws://"+addr+"/ws")
	if err != nil {
		t.Fatalf("Dial from the page's origin: %v", err)
	}
	c.conn = conn
	c.send(event{Type: "join", Nick: "ann"})
	c.expect(event{Type: "welcome", Nick: "ann"})
	if conn.Compressed() {
		t.Error("compressed, though the client did not offer it")
	}
	conn.Close(websocket.StatusNormalClosure, "")
	c.expectClose(websocket.StatusNormalClosure, "")
}
