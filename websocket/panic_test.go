package websocket_test

import (
	"bytes"
	"errors"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// panicker echoes messages, and panics on "panic" (in OnMessage or
// OnPing) or in an OnOpen whose request asks for it; it reports OnClose.
type panicker struct {
	websocket.BaseHandler
	closed chan error
}

func (p *panicker) OnOpen(c *websocket.Conn) {
	if c.Context() == "panic" {
		panic("boom in OnOpen")
	}
}

func (p *panicker) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	if string(data) == "panic" {
		panic("boom")
	}
	c.WriteMessage(typ, data)
}

func (p *panicker) OnPing(c *websocket.Conn, data []byte) {
	if string(data) == "panic" {
		panic("boom in OnPing")
	}
}

func (p *panicker) OnClose(c *websocket.Conn, err error) { p.closed <- err }

// syncLog is a log's output, safe for the loops to write and the test to
// read.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestPanicMessage checks that a handler's panic in OnMessage, OnOpen
// or OnPing fails that connection only, with a close frame 1011 to the
// peer and a *engine.PanicError to OnClose, logged with its stack, while
// another connection of the same loop is served before and after.
func TestPanicMessage(t *testing.T) { backendtest.Run(t, testPanicMessage) }

func testPanicMessage(t *testing.T) {
	srv := &panicker{closed: make(chan error, 8)}
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv}}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		u.UpgradeWith(w, r, nil, r.URL.Query().Get("v"))
	})
	logs := new(syncLog)
	s := &httpd.Server{Handler: mux, Engine: engine.Options{Loops: 1, ErrorLog: log.New(logs, "", 0)}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	url := "ws://" + ln.Addr().String() + "/ws"

	other := newRecorder(false)
	oc := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: other}}, url)
	other.expect(t, "open")
	oc.WriteMessage(websocket.TextMessage, []byte("before"))
	other.expect(t, "msg", "before")

	for _, tc := range []struct {
		name, query, send, value string
		typ                      websocket.MessageType
	}{
		{"OnMessage", "", "panic", "boom", websocket.TextMessage},
		{"OnOpen", "?v=panic", "", "boom in OnOpen", 0},
		{"OnPing", "", "panic", "boom in OnPing", websocket.PingMessage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cli := newRecorder(false)
			c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url+tc.query)
			cli.expect(t, "open")
			switch tc.typ {
			case websocket.TextMessage:
				c.WriteMessage(tc.typ, []byte(tc.send))
			case websocket.PingMessage:
				c.WriteControl(tc.typ, []byte(tc.send))
			}
			ev := cli.next(t)
			if ev.kind == "pong" { // the loop answers a ping before OnPing
				ev = cli.next(t)
			}
			if ev.kind != "close" {
				t.Fatalf("client event %s %q, want close", ev.kind, ev.data)
			}
			if got := websocket.CloseStatus(ev.err); got != websocket.StatusInternalError {
				t.Errorf("client OnClose(%v): status %d, want %d", ev.err, got, websocket.StatusInternalError)
			}
			select {
			case err := <-srv.closed:
				var pe *engine.PanicError
				if !errors.As(err, &pe) || pe.Value != tc.value {
					t.Errorf("server OnClose(%v), want a *engine.PanicError of %q", err, tc.value)
				}
			case <-time.After(testTimeout):
				t.Fatal("no server OnClose")
			}
			if l := logs.String(); !strings.Contains(l, tc.value+"\n") || !strings.Contains(l, "panic_test.go") {
				t.Errorf("log = %q, want the panic %q with its stack", l, tc.value)
			}

			oc.WriteMessage(websocket.TextMessage, []byte("after"))
			other.expect(t, "msg", "after")
		})
	}
	oc.Close(websocket.StatusNormalClosure, "")
	other.expect(t, "close")
	<-srv.closed
}
