package websocket_test

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// BenchmarkEcho measures a round trip through gale's server and client on
// loopback: one message out, its echo back, per operation.
func BenchmarkEcho(b *testing.B) {
	for _, mode := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled} {
		for _, size := range []int{16, 1 << 10, 64 << 10} {
			name := map[websocket.CompressionMode]string{0: "plain", 1: "deflate"}[mode] + "/Size=" + strconv.Itoa(size)
			b.Run(name, func(b *testing.B) {
				u := &websocket.Upgrader{Options: websocket.Options{Handler: &signal{echo: true}, Compression: mode}}
				url := serveWS(b, u, false)
				cli := &signal{got: make(chan int, 1)}
				c := dial(b, &websocket.Dialer{Options: websocket.Options{Handler: cli, Compression: mode}}, url)
				defer c.CloseNow()
				msg := bytes.Repeat([]byte("gale websocket! "), size/16)
				b.SetBytes(int64(2 * size))
				b.ReportAllocs()
				for b.Loop() {
					c.WriteMessage(websocket.BinaryMessage, msg)
					<-cli.got
				}
			})
		}
	}
}

// BenchmarkStreamRead measures a server receiving a message whole
// (OnMessage) and in pieces (a StreamHandler), on loopback from gale's
// client: one message in, a 2-byte answer out, per operation.
func BenchmarkStreamRead(b *testing.B) {
	for _, mode := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled} {
		for _, how := range []string{"whole", "pieces"} {
			size := 1 << 20
			name := how + "/" + map[websocket.CompressionMode]string{0: "plain", 1: "deflate"}[mode] + "/Size=" + strconv.Itoa(size)
			b.Run(name, func(b *testing.B) {
				var h websocket.Handler = acker{}
				if how == "pieces" {
					h = streamAcker{}
				}
				u := &websocket.Upgrader{Options: websocket.Options{Handler: h, Compression: mode, ReadLimit: 2 * size}}
				url := serveWS(b, u, false)
				cli := &signal{got: make(chan int, 1)}
				c := dial(b, &websocket.Dialer{Options: websocket.Options{Handler: cli, Compression: mode}}, url)
				defer c.CloseNow()
				msg := bytes.Repeat([]byte("gale websocket! "), size/16)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					c.WriteMessage(websocket.BinaryMessage, msg)
					<-cli.got
				}
			})
		}
	}
}

// acker answers each message whole with "ok".
type acker struct{ websocket.BaseHandler }

func (acker) OnMessage(c *websocket.Conn, _ websocket.MessageType, _ []byte) {
	c.WriteMessage(websocket.BinaryMessage, []byte("ok"))
}

// streamAcker answers each message, taken in pieces, with "ok".
type streamAcker struct{ websocket.BaseHandler }

func (streamAcker) OnMessageStart(*websocket.Conn, websocket.MessageType) {}

func (streamAcker) OnMessageData(c *websocket.Conn, _ []byte, final bool) {
	if final {
		c.WriteMessage(websocket.BinaryMessage, []byte("ok"))
	}
}

// BenchmarkPoolEcho measures the echo of BenchmarkEcho (uncompressed)
// with the server's OnMessage on the loop and on an engine.Pool: the
// cost of the hand-over, a copy and a worker's wake-up per message.
func BenchmarkPoolEcho(b *testing.B) {
	for _, where := range []string{"loop", "pool"} {
		for _, size := range []int{16, 1 << 10} {
			b.Run(where+"/Size="+strconv.Itoa(size), func(b *testing.B) {
				o := websocket.Options{Handler: &signal{echo: true}}
				if where == "pool" {
					p := engine.NewPool(engine.PoolOptions{})
					b.Cleanup(p.Close)
					o.Pool = p
				}
				url := serveWS(b, &websocket.Upgrader{Options: o}, false)
				cli := &signal{got: make(chan int, 1)}
				c := dial(b, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
				defer c.CloseNow()
				msg := bytes.Repeat([]byte("gale websocket! "), size/16)
				b.SetBytes(int64(2 * size))
				b.ReportAllocs()
				for b.Loop() {
					c.WriteMessage(websocket.BinaryMessage, msg)
					<-cli.got
				}
			})
		}
	}
}
