package websocket_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/galeio/gale/websocket"
)

// BenchmarkConnMemory reports the heap a connection holds, server and
// client ends together, after each received one 4 KiB compressible
// message (its echo): B/pair. The server's compression mode varies, the
// client's stays CompressionEnabled (no window of its own), so the
// difference between the modes is the server's context-takeover window.
func BenchmarkConnMemory(b *testing.B) {
	const n = 300
	for _, mode := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled, websocket.CompressionContextTakeover} {
		name := map[websocket.CompressionMode]string{0: "plain", 1: "deflate", 2: "takeover"}[mode]
		b.Run(name, func(b *testing.B) {
			u := &websocket.Upgrader{Options: websocket.Options{Handler: &signal{echo: true}, Compression: mode}}
			url := serveWS(b, u, false)
			cli := &signal{got: make(chan int, n)}
			d := &websocket.Dialer{Options: websocket.Options{Handler: cli, Compression: websocket.CompressionEnabled}}
			msg := bytes.Repeat([]byte("a message the peers keep a window of; "), 110)[:4096]
			for b.Loop() {
				before := heap()
				conns := make([]*websocket.Conn, n)
				for i := range conns {
					conns[i] = dial(b, d, url)
					conns[i].WriteMessage(websocket.TextMessage, msg)
					<-cli.got
				}
				b.ReportMetric(float64(heap()-before)/n, "B/pair")
				for _, c := range conns {
					c.CloseNow()
				}
			}
		})
	}
}

func heap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
