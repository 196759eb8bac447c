package websocket_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"

	"github.com/galeio/gale/websocket"
)

// wrapped is a net.Conn that is no socket: the Dialer relays it.
type wrapped struct{ net.Conn }

// TestDialNetDialContext dials through NetDialContext, with a socket
// (adopted) and with a wrapper (relayed), sends a Host header of its
// own, and traces the dial: the message echoes either way, the server
// sees the Host, and the trace's hooks run in order.
func TestDialNetDialContext(t *testing.T) {
	for _, wrap := range []bool{false, true} {
		t.Run(map[bool]string{false: "socket", true: "wrapper"}[wrap], func(t *testing.T) {
			hosts := make(chan string, 1)
			u := &websocket.Upgrader{Options: websocket.Options{Handler: newRecorder(true), Engine: testEngine(t)}}
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hosts <- r.Host
				u.Upgrade(w, r, nil)
			}))
			t.Cleanup(s.Close)
			var mu sync.Mutex
			var events []string
			ev := func(e string) { mu.Lock(); events = append(events, e); mu.Unlock() }
			cli := newRecorder(false)
			d := &websocket.Dialer{
				Options: websocket.Options{Handler: cli},
				Header:  http.Header{"Host": {"example.com"}},
				NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					ev("dial " + addr)
					nc, err := new(net.Dialer).DialContext(ctx, network, addr)
					if wrap && err == nil {
						return wrapped{nc}, nil
					}
					return nc, err
				},
			}
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				GetConn:              func(string) { ev("GetConn") },
				ConnectDone:          func(string, string, error) { ev("ConnectDone") },
				GotConn:              func(httptrace.GotConnInfo) { ev("GotConn") },
				WroteRequest:         func(httptrace.WroteRequestInfo) { ev("WroteRequest") },
				GotFirstResponseByte: func() { ev("GotFirstResponseByte") },
			})
			url := "ws" + strings.TrimPrefix(s.URL, "http")
			d.Engine = testEngine(t)
			c, _, err := d.Dial(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			cli.expect(t, "open")
			c.WriteMessage(websocket.TextMessage, []byte("hi"))
			cli.expect(t, "msg", "hi")
			if h := <-hosts; h != "example.com" {
				t.Errorf("server saw Host %q, want example.com", h)
			}
			mu.Lock()
			got := strings.Join(events, ", ")
			mu.Unlock()
			want := "GetConn, dial " + strings.TrimPrefix(s.URL, "http://") + ", ConnectDone, GotConn, WroteRequest, GotFirstResponseByte"
			if got != want {
				t.Errorf("events: %s\nwant:   %s", got, want)
			}
		})
	}
}
