//go:build !race

package websocket_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"testing"

	"github.com/galeio/gale/websocket"
)

// TestEchoAllocs guards the steady state: a message echoed through gale's
// server and client, both ways, costs no allocation, uncompressed and
// compressed.
func TestEchoAllocs(t *testing.T) {
	if backendtest.NetSocketsOnNet() { // the server is httpd's, on package net's listener
		t.Skip("net backend: a worker goroutine and its record per operation")
	}
	for _, mode := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled} {
		t.Run(map[websocket.CompressionMode]string{0: "plain", 1: "deflate"}[mode], func(t *testing.T) {
			u := &websocket.Upgrader{Options: websocket.Options{Handler: &signal{echo: true}, Compression: mode}}
			url := serveWS(t, u, false)
			cli := &signal{got: make(chan int, 1)}
			c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Compression: mode}}, url)
			msg := bytes.Repeat([]byte("0123456789abcdef"), 64) // 1 KiB
			round := func() {
				c.WriteMessage(websocket.BinaryMessage, msg)
				<-cli.got
			}
			for range 100 {
				round()
			}
			if n := testing.AllocsPerRun(1000, round); n > 0 {
				t.Errorf("%v allocations per echoed message, want 0", n)
			}
			c.CloseNow()
		})
	}
}
