package websocket_test

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// hangupHandler writes a message and hangs up at once, and reports what
// a write then returns, and OnClose's error.
type hangupHandler struct {
	websocket.BaseHandler
	late, closed chan error
}

func (h hangupHandler) OnOpen(c *websocket.Conn) {
	c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 1<<20)))
	c.Hangup()
	h.late <- c.WriteMessage(websocket.TextMessage, []byte("late"))
}

func (h hangupHandler) OnClose(c *websocket.Conn, err error) { h.closed <- err }

// TestHangup: a connection hung up without a close frame delivers what
// was queued before it, then the end of the stream.
func TestHangup(t *testing.T) {
	h := hangupHandler{late: make(chan error, 1), closed: make(chan error, 1)}
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: h}}, false)
	cli := newRecorder(false)
	dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
	cli.expect(t, "open")
	cli.expect(t, "msg", strings.Repeat("x", 1<<20))
	ev := cli.expect(t, "close")
	if !errors.Is(ev.err, io.EOF) && !errors.Is(ev.err, io.ErrUnexpectedEOF) {
		t.Errorf("client OnClose(%v), want the end of the stream", ev.err)
	}
	for name, ch := range map[string]chan error{"write after Hangup": h.late, "server OnClose": h.closed} {
		select {
		case err := <-ch:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("%s: %v, want net.ErrClosed", name, err)
			}
		case <-time.After(testTimeout):
			t.Fatalf("no %s", name)
		}
	}
}
