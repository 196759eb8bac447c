package websocket_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/galeio/gale/websocket"
)

// TestCompressedEcho echoes messages, streams and a broadcast through
// gale's server and client for every pair of compression modes: the
// messages come back whole, and permessage-deflate is on exactly when
// both ends enable it.
func TestCompressedEcho(t *testing.T) {
	modes := []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled, websocket.CompressionContextTakeover}
	rnd := make([]byte, 100<<10)
	for i := range rnd {
		rnd[i] = byte(rand.IntN(256))
	}
	for _, sm := range modes {
		for _, cm := range modes {
			t.Run(fmt.Sprintf("server%d-client%d", sm, cm), func(t *testing.T) {
				srv := newRecorder(true)
				url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv, Compression: sm}}, false)
				cli := newRecorder(false)
				c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Compression: cm}}, url)
				cli.expect(t, "open")
				srv.expect(t, "open")
				if want := sm != 0 && cm != 0; c.Compressed() != want {
					t.Fatalf("Compressed() = %v, want %v", c.Compressed(), want)
				}
				msgs := [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abc "), 100), rnd, bytes.Repeat([]byte("long repeat "), 50000)}
				for i := range 20 { // small alike messages: where takeover pays
					msgs = append(msgs, fmt.Appendf(nil, `{"seq":%d,"kind":"tick","payload":"the same words again and again"}`, i))
				}
				for _, m := range msgs {
					if err := c.WriteMessage(websocket.BinaryMessage, m); err != nil {
						t.Fatal(err)
					}
					srv.expect(t, "msg", string(m))
					cli.expect(t, "msg", string(m))
				}
				w, _ := c.NextWriter(websocket.TextMessage)
				for range 10 {
					io.WriteString(w, "streamed, compressed piece by piece; ")
				}
				w.Close()
				whole := bytes.Repeat([]byte("streamed, compressed piece by piece; "), 10)
				srv.expect(t, "msg", string(whole))
				cli.expect(t, "msg", string(whole))
				c.CloseNow()
				srv.expect(t, "close")
			})
		}
	}
}

// greeter sends, on open, a prepared message and a streamed one.
type greeter struct {
	websocket.BaseHandler
	pm *websocket.PreparedMessage
}

func (g greeter) OnOpen(c *websocket.Conn) {
	c.WritePrepared(g.pm)
	w, _ := c.NextWriter(websocket.TextMessage)
	for range 3 {
		io.WriteString(w, "server stream; ")
	}
	w.Close()
}

// TestCompressedFromServer checks a server's prepared and streamed
// messages reach clients with each window setting: the prepared
// message's compressed frames are shared among them.
func TestCompressedFromServer(t *testing.T) {
	text := bytes.Repeat([]byte("prepared once, compressed once; "), 200)
	pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, text)
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: greeter{pm: pm}, Compression: websocket.CompressionEnabled}}, false)
	for _, cm := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled, websocket.CompressionContextTakeover} {
		cli := newRecorder(false)
		c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Compression: cm}}, url)
		cli.expect(t, "open")
		cli.expect(t, "msg", string(text))
		cli.expect(t, "msg", "server stream; server stream; server stream; ")
		c.CloseNow()
	}
}
