package websocket_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// raceConns is how many connections the context tests open: the race
// they look for showed in 0 to 27 of 300 under -race.
const raceConns = 300

// serverKinds are the HTTP servers an Upgrader serves on: gale's, whose
// connections stay on their loops, and net/http's, whose are hijacked and
// adopted onto an engine.
var serverKinds = []string{"httpd", "net/http"}

// user is a test's per-connection value; done is closed by OnClose.
type user struct {
	id   int64
	done chan struct{}
}

func newUser(id int64) *user { return &user{id: id, done: make(chan struct{})} }

// ctxSeen is a server Handler that checks, in OnOpen and OnMessage, that
// the connection's value is already there (by default its Context, a
// *user), and answers each message with "ok".
type ctxSeen struct {
	websocket.BaseHandler
	has            func(c *websocket.Conn) bool // nil: Context is a *user
	opens, openNil atomic.Int64
	msgs, msgNil   atomic.Int64
	closes         atomic.Int64
}

func (h *ctxSeen) seen(c *websocket.Conn) bool {
	if h.has != nil {
		return h.has(c)
	}
	_, ok := c.Context().(*user)
	return ok
}

func (h *ctxSeen) OnOpen(c *websocket.Conn) {
	h.opens.Add(1)
	if !h.seen(c) {
		h.openNil.Add(1)
	}
}

func (h *ctxSeen) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	h.msgs.Add(1)
	if !h.seen(c) {
		h.msgNil.Add(1)
	}
	c.WriteMessage(websocket.TextMessage, []byte("ok"))
}

func (h *ctxSeen) OnClose(c *websocket.Conn, _ error) {
	h.closes.Add(1)
	if u, ok := c.Context().(*user); ok {
		close(u.done)
	}
}

// hello is a client Handler that sends "hi" as soon as it is open and
// reports each answer on got.
type hello struct {
	websocket.BaseHandler
	got chan struct{}
}

func (g *hello) OnOpen(c *websocket.Conn) { c.WriteMessage(websocket.TextMessage, []byte("hi")) }

func (g *hello) OnMessage(*websocket.Conn, websocket.MessageType, []byte) { g.got <- struct{}{} }

// serveHandler serves h over gale's HTTP server ("httpd") or net/http's
// ("net/http") and returns its ws:// URL; the server is closed at the
// test's end.
func serveHandler(t *testing.T, kind string, h http.HandlerFunc) string {
	t.Helper()
	if kind == "net/http" {
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		return "ws://" + hs.Listener.Addr().String() + "/ws"
	}
	s := &httpd.Server{Handler: h, Engine: engine.Options{Loops: 2}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return "ws://" + ln.Addr().String() + "/ws"
}

// dialMany opens n client connections to url with d, whose Handler is a
// *hello, 8 at a time, waits for every one's answer, then cuts them all.
func dialMany(t *testing.T, d *websocket.Dialer, url string, n int) {
	t.Helper()
	g := d.Handler.(*hello)
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	var (
		mu    sync.Mutex
		conns []*websocket.Conn
		wg    sync.WaitGroup
		next  atomic.Int64
		fails atomic.Int64
	)
	for range 8 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				c, _, err := d.Dial(ctx, url)
				if err != nil {
					t.Errorf("Dial: %v", err)
					fails.Add(1)
					return
				}
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			c.CloseNow()
		}
	}()
	if fails.Load() > 0 {
		t.FailNow()
	}
	for i := range n {
		select {
		case <-g.got:
		case <-ctx.Done():
			t.Fatalf("%d of %d answers came", i, n)
		}
	}
}

// waitCount waits, within testTimeout, until f() is want.
func waitCount(t *testing.T, what string, f func() int64, want int64) {
	t.Helper()
	for deadline := time.Now().Add(testTimeout); f() != want; {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %d, want %d", what, f(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// wait waits for ch within testTimeout, and reports whether it came.
func wait(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-time.After(testTimeout):
		return false
	}
}

// habit is the part of an HTTP handler that upgrades and gives the
// connection its value, as a user of the package would write it.
type habit struct {
	name string
	// upgrade upgrades, gives the connection the value id (or keeps it
	// in table), and returns when the handler would.
	upgrade func(u *websocket.Upgrader, w http.ResponseWriter, r *http.Request, id int64, table *sync.Map)
	table   bool // the value is the Conn's entry in table, not its Context
}

var habits = []habit{
	{name: "SetContext", upgrade: func(u *websocket.Upgrader, w http.ResponseWriter, r *http.Request, id int64, _ *sync.Map) {
		if c, err := u.Upgrade(w, r, nil); err == nil {
			c.SetContext(newUser(id))
		}
	}},
	// A moment spent finding the value (a session looked up) makes the
	// race certain to show where the callbacks do not wait for it.
	{name: "SetContext-after-lookup", upgrade: func(u *websocket.Upgrader, w http.ResponseWriter, r *http.Request, id int64, _ *sync.Map) {
		if c, err := u.Upgrade(w, r, nil); err == nil {
			time.Sleep(time.Millisecond)
			c.SetContext(newUser(id))
		}
	}},
	// The Conn kept in a table of the handler's, without SetContext: the
	// callbacks wait for the handler's return.
	{name: "table", table: true, upgrade: func(u *websocket.Upgrader, w http.ResponseWriter, r *http.Request, id int64, table *sync.Map) {
		if c, err := u.Upgrade(w, r, nil); err == nil {
			time.Sleep(time.Millisecond)
			table.Store(c, newUser(id))
		}
	}},
	// A handler that goes on after SetContext: the callbacks begin at
	// SetContext, and their OnClose lets the handler return.
	{name: "SetContext-then-wait", upgrade: func(u *websocket.Upgrader, w http.ResponseWriter, r *http.Request, id int64, _ *sync.Map) {
		if c, err := u.Upgrade(w, r, nil); err == nil {
			v := newUser(id)
			c.SetContext(v)
			wait(v.done)
		}
	}},
	{name: "UpgradeWith-then-wait", upgrade: func(u *websocket.Upgrader, w http.ResponseWriter, r *http.Request, id int64, _ *sync.Map) {
		v := newUser(id)
		if _, err := u.UpgradeWith(w, r, nil, v); err == nil {
			wait(v.done)
		}
	}},
}

// TestUpgradeContext is issue 32's race: the gorilla (and nbio) habit of
// calling SetContext on the connection Upgrade returned, with callbacks
// that read the value. Each client writes as soon as it is open, so the
// server's OnMessage comes as early as it can. Every OnOpen and OnMessage
// must see the value, however the handler gave it: SetContext at once or
// after a moment, a table of its own, SetContext or UpgradeWith in a
// handler that goes on.
func TestUpgradeContext(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, kind := range serverKinds {
			for _, h := range habits {
				t.Run(kind+"/"+h.name, func(t *testing.T) { testUpgradeContext(t, kind, h) })
			}
		}
	})
}

func testUpgradeContext(t *testing.T, kind string, h habit) {
	e := testEngine(t)
	srv := &ctxSeen{}
	var table sync.Map
	if h.table {
		srv.has = func(c *websocket.Conn) bool { _, ok := table.Load(c); return ok }
	}
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, Engine: e}}
	var ids atomic.Int64
	url := serveHandler(t, kind, func(w http.ResponseWriter, r *http.Request) {
		h.upgrade(u, w, r, ids.Add(1), &table)
	})
	d := &websocket.Dialer{Options: websocket.Options{Handler: &hello{got: make(chan struct{}, raceConns)}, Engine: e}}
	dialMany(t, d, url, raceConns)
	waitCount(t, "server OnClose calls", srv.closes.Load, raceConns)
	if n, m := srv.openNil.Load(), srv.msgNil.Load(); n > 0 || m > 0 {
		t.Errorf("the value was missing in %d of %d OnOpen and %d of %d OnMessage calls, want 0",
			n, srv.opens.Load(), m, srv.msgs.Load())
	}
}

// trace is a server Handler that reports each callback, with whether
// the connection's Context was a *user then, on a channel.
type trace struct {
	websocket.BaseHandler
	events chan string
}

func newTrace() *trace { return &trace{events: make(chan string, 16)} }

func has(c *websocket.Conn) string {
	if _, ok := c.Context().(*user); ok {
		return "+v"
	}
	return "-v"
}

func (h *trace) OnOpen(c *websocket.Conn) { h.events <- "open " + has(c) }

func (h *trace) OnMessage(c *websocket.Conn, _ websocket.MessageType, data []byte) {
	c.WriteMessage(websocket.TextMessage, []byte("ok"))
	h.events <- fmt.Sprintf("msg %s %s", data, has(c))
}

func (h *trace) OnClose(c *websocket.Conn, err error) {
	h.events <- fmt.Sprintf("close %s %v", has(c), err)
}

// expect checks the next events against want, in order.
func (h *trace) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		select {
		case got := <-h.events:
			if got != w {
				t.Fatalf("event %q, want %q", got, w)
			}
		case <-time.After(testTimeout):
			t.Fatalf("no event within %v, want %q", testTimeout, w)
		}
	}
	select {
	case got := <-h.events:
		t.Fatalf("event %q, want no more", got)
	case <-time.After(20 * time.Millisecond):
	}
}

// TestUpgradeHeld checks what happens to a connection while its
// callbacks wait for the handler: when it ends meanwhile, and when the
// client's message and the end of its stream come meanwhile. OnOpen,
// with the value, comes first either way, then what came, in order.
func TestUpgradeHeld(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, kind := range serverKinds {
			t.Run(kind+"/ended", func(t *testing.T) { testHeldEnded(t, kind) })
			t.Run(kind+"/input-and-end", func(t *testing.T) { testHeldInput(t, kind, true) })
			t.Run(kind+"/end", func(t *testing.T) { testHeldInput(t, kind, false) })
			t.Run(kind+"/gone-before", func(t *testing.T) { testHeldGoneBefore(t, kind) })
		}
		t.Run("net/http/no-handler-signal", testHeldNoSignal)
	})
}

// testHeldEnded: the handler cuts the connection before its SetContext;
// OnOpen and OnClose then run at the SetContext, and see the value.
func testHeldEnded(t *testing.T, kind string) {
	e := testEngine(t)
	srv := newTrace()
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, Engine: e}}
	// The client reads its 101 before the handler cuts the connection:
	// CloseNow resets it, and a reset that came first would discard the
	// 101 unread (it failed so once in CI, on a loaded machine).
	got101 := make(chan struct{})
	url := serveHandler(t, kind, func(w http.ResponseWriter, r *http.Request) {
		c, err := u.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		wait(got101)
		c.CloseNow()
		time.Sleep(10 * time.Millisecond) // the loop lets the connection go meanwhile
		c.SetContext(newUser(1))
	})
	rc, resp := rawDial(t, url)
	close(got101)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	srv.expect(t, "open +v", "close +v "+net.ErrClosed.Error())
	rc.nc.Close()
}

// testHeldGoneBefore: the client ends its stream right after its upgrade
// request, and the server sees that end before the handler upgrades.
// httpd.Server upgrades it all the same, and OnOpen (with the value),
// then OnClose come. net/http's has canceled the request's context,
// which then cannot tell when the handler returns: the upgrade fails with
// net.ErrClosed, with no callback.
func testHeldGoneBefore(t *testing.T, kind string) {
	e := testEngine(t)
	srv := newTrace()
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, Engine: e}}
	result := make(chan error, 1)
	url := serveHandler(t, kind, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done(): // the server saw the client's end
		case <-time.After(testTimeout):
		}
		c, err := u.Upgrade(w, r, nil)
		if err == nil {
			c.SetContext(newUser(1))
		}
		result <- err
	})
	nc := rawRequest(t, url)
	nc.(*net.TCPConn).CloseWrite()
	var err error
	select {
	case err = <-result:
	case <-time.After(2 * testTimeout):
		t.Fatal("the handler did not return")
	}
	if kind == "httpd" {
		if err != nil {
			t.Fatalf("Upgrade after the client's end: %v, want nil", err)
		}
		srv.expect(t, "open +v", "close +v "+io.EOF.Error())
		return
	}
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Upgrade after the client's end: %v, want net.ErrClosed", err)
	}
	srv.expect(t)
}

// rawRequest connects to the server of a ws:// url and sends an upgrade
// request, and extra after it; the connection is closed at the test's
// end.
func rawRequest(t *testing.T, url string, extra ...[]byte) net.Conn {
	t.Helper()
	host := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws")
	nc, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(testTimeout))
	b := []byte("GET /ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	for _, x := range extra {
		b = append(b, x...)
	}
	if _, err := nc.Write(b); err != nil {
		t.Fatal(err)
	}
	return nc
}

// testHeldInput: the client sends its upgrade request and a message (if
// msg is set) at once, then the end of its stream once the 101 came,
// while the handler takes a moment before its SetContext: the message is
// answered, then the connection closes.
func testHeldInput(t *testing.T, kind string, msg bool) {
	e := testEngine(t)
	srv := newTrace()
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, Engine: e}}
	url := serveHandler(t, kind, func(w http.ResponseWriter, r *http.Request) {
		c, err := u.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		time.Sleep(20 * time.Millisecond) // the end of the client's stream arrives meanwhile
		c.SetContext(newUser(1))
	})
	var extra [][]byte
	if msg {
		extra = append(extra, rawFrame(0x81, true, []byte("hi")))
	}
	nc := rawRequest(t, url, extra...)
	rc := &rawConn{t: t, nc: nc, r: bufio.NewReader(nc)}
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("response %v, %v; want 101", resp, err)
	}
	nc.(*net.TCPConn).CloseWrite()
	if !msg {
		srv.expect(t, "open +v", "close +v "+io.EOF.Error())
	} else {
		srv.expect(t, "open +v", "msg hi +v", "close +v "+io.EOF.Error())
		if f, err := rc.read(); err != nil || f.op() != 1 || string(f.payload) != "ok" {
			t.Fatalf("frame %v, %v; want the text ok", f, err)
		}
	}
	if _, err := rc.r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the answer: %v, want EOF", err)
	}
}

// testHeldNoSignal: on net/http's server, a request whose context is
// never canceled cannot say when the handler returns, so nothing waits
// for it: OnOpen runs while the handler is still in its Upgrade's wake,
// before any SetContext.
func testHeldNoSignal(t *testing.T) {
	e := testEngine(t)
	opened := make(chan struct{})
	srv := newTrace()
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, Engine: e}}
	url := serveHandler(t, "net/http", func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(context.WithoutCancel(r.Context()))
		if _, err := u.Upgrade(w, r, nil); err != nil {
			return
		}
		select {
		case ev := <-srv.events:
			if ev != "open -v" {
				t.Errorf("event %q, want open -v", ev)
			}
			close(opened)
		case <-time.After(testTimeout):
		}
	})
	rc, _ := rawDial(t, url)
	if !wait(opened) {
		t.Fatal("OnOpen did not come while the handler waited for it")
	}
	rc.nc.Close()
	srv.expect(t, "close -v "+io.EOF.Error())
}

// greet is a server Handler that speaks first: OnOpen sends "welcome".
type greet struct{ websocket.BaseHandler }

func (greet) OnOpen(c *websocket.Conn) { c.WriteMessage(websocket.TextMessage, []byte("welcome")) }

// TestDialWith checks that a client connection's value given to DialWith
// is there for its OnOpen and for the OnMessage of a server that speaks
// first, both of which may run before Dial returns.
func TestDialWith(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		e := testEngine(t)
		u := &websocket.Upgrader{Options: websocket.Options{Handler: greet{}, Engine: e}}
		url := serveHandler(t, "httpd", func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) })
		cli := &ctxSeen{}
		d := &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e}}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		const n = 100
		var conns []*websocket.Conn
		defer func() {
			for _, c := range conns {
				c.CloseNow()
			}
		}()
		for i := range n {
			c, _, err := d.DialWith(ctx, url, newUser(int64(i)))
			if err != nil {
				t.Fatalf("DialWith: %v", err)
			}
			conns = append(conns, c)
		}
		waitCount(t, "client OnMessage calls", cli.msgs.Load, n)
		if a, b := cli.openNil.Load(), cli.msgNil.Load(); a > 0 || b > 0 {
			t.Errorf("the value was missing in %d of %d OnOpen and %d of %d OnMessage calls, want 0",
				a, cli.opens.Load(), b, cli.msgs.Load())
		}
	})
}
