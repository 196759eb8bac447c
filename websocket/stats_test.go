package websocket_test

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/galeio/gale/websocket"
)

// TestStats checks the Upgrader's and the Dialer's counters after known
// traffic: messages and bytes both ways, a stream, and a close.
func TestStats(t *testing.T) {
	srv := newRecorder(true)
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv}}
	url := serveWS(t, u, false)
	cli := newRecorder(false)
	d := &websocket.Dialer{Options: websocket.Options{Handler: cli}}
	if s := d.Stats(); s.Open != 0 || len(s.Closes) != 0 {
		t.Fatalf("Dialer.Stats() before any Dial = %+v", s)
	}
	c := dial(t, d, url)
	cli.expect(t, "open")
	srv.expect(t, "open")
	const n = 5
	for i := range n {
		c.WriteMessage(websocket.TextMessage, []byte(strings.Repeat("x", 100*i)))
		srv.expect(t, "msg")
		cli.expect(t, "msg")
	}
	w, err := c.NextWriter(websocket.BinaryMessage)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "abc")
	io.WriteString(w, "de")
	w.Close()
	srv.expect(t, "msg", "abcde")
	cli.expect(t, "msg", "abcde")
	const bytes = 1000 + 5 // 0+100+200+300+400, and the stream
	want := websocket.Stats{Open: 1, MessagesIn: n + 1, BytesIn: bytes, MessagesOut: n + 1, BytesOut: bytes, Closes: map[websocket.StatusCode]uint64{}}
	for _, s := range []websocket.Stats{u.Stats(), d.Stats()} {
		if !reflect.DeepEqual(s, want) {
			t.Errorf("Stats() = %+v, want %+v", s, want)
		}
	}
	c.Close(websocket.StatusGoingAway, "bye")
	srv.expect(t, "close")
	cli.expect(t, "close")
	want.Open, want.Closes = 0, map[websocket.StatusCode]uint64{websocket.StatusGoingAway: 1}
	for _, s := range []websocket.Stats{u.Stats(), d.Stats()} {
		if !reflect.DeepEqual(s, want) {
			t.Errorf("after the close: Stats() = %+v, want %+v", s, want)
		}
	}
}
