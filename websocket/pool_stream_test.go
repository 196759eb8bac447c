package websocket_test

import (
	"bytes"
	"compress/flate"
	"fmt"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// TestPoolStreamHandler: a StreamHandler's pieces, on a Pool, come in
// order and whole, with the message's fragments, a ping between them and
// a compressed message inflated in pieces, as on the loop.
func TestPoolStreamHandler(t *testing.T) { backendtest.Run(t, testPoolStreamHandler) }

func testPoolStreamHandler(t *testing.T) {
	p := engine.NewPool(engine.PoolOptions{MaxWorkers: 2, MaxQueued: 4 << 10})
	t.Cleanup(p.Close)
	pieces := &outcomes{ends: make(chan ended, 1)}
	o := websocket.Options{ReadLimit: 1 << 20, Compression: websocket.CompressionEnabled,
		Handler: &streamOutcomes{pieces}, Pool: p}
	url := serveWS(t, &websocket.Upgrader{Options: o}, false)
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000) // 320,000 B: many pieces
	d := newDeflater(flate.BestSpeed)
	var data []byte
	data = append(data, rawFrame(0x01, true, []byte("hello "))...)
	data = append(data, rawFrame(0x89, true, []byte("ping"))...)
	data = append(data, rawFrame(0x80, true, []byte("world"))...)
	data = append(data, rawFrame(0xc2, true, d.message(big))...)
	data = append(data, rawFrame(0x82, true, big)...)
	data = append(data, rawFrame(0x88, true, closePayload(1000, "ok"))...)
	got := outcome(t, url, pieces, data, len(data)/3)
	want := fmt.Sprintf("1 %q\n2 %q\n2 %q\nclose frame 1000 \"ok\"", "hello world", big, big)
	if got.log != want {
		t.Fatalf("pieces on a pool: %.300s\nwant %.300s", got.log, want)
	}
}
