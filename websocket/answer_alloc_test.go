//go:build !race

package websocket

import (
	"net/http"
	"testing"
)

// TestAnswerAllocs guards the garbage of a server's handshake, which a
// million upgrades leave for the collector: checking a request and
// writing the 101's header cost two allocations, the Sec-WebSocket-Accept
// value and its slice, whatever the case of the client's header names.
func TestAnswerAllocs(t *testing.T) {
	u := &Upgrader{}
	u.init()
	r, err := http.NewRequest(http.MethodGet, "http://example.com/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Connection": "keep-alive, Upgrade", "Upgrade": "websocket",
		"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": "http://example.com"} {
		r.Header.Set(k, v)
	}
	h := make(http.Header)
	var c Conn
	n := testing.AllocsPerRun(1000, func() {
		clear(h) // keeps the map's room
		if status, why := u.check(r); status != 0 {
			t.Fatalf("check = %d %q, want 0", status, why)
		}
		c = Conn{cfg: u.cfg}
		u.answer(&c, h, r, false)
	})
	if n > 2 {
		t.Errorf("check and answer: %v allocations, want at most 2", n)
	}
	if got, want := h.Get("Sec-WebSocket-Accept"), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Errorf("Sec-WebSocket-Accept = %q, want %q", got, want)
	}
	if got := h.Get("Upgrade") + " " + h.Get("Connection"); got != "websocket Upgrade" {
		t.Errorf("Upgrade, Connection = %q, want %q", got, "websocket Upgrade")
	}
}

// TestNewConnAllocs checks that a Conn made with no value, as Upgrade
// makes it, is one allocation: its box is made only for a value.
func TestNewConnAllocs(t *testing.T) {
	cfg := newConfig(Options{})
	var c *Conn
	if n := testing.AllocsPerRun(100, func() { c = newConn(cfg, server, nil) }); n != 1 {
		t.Errorf("a Conn with no value: %v allocations, want 1", n)
	}
	if n := testing.AllocsPerRun(100, func() { c = newConn(cfg, server, c) }); n != 2 {
		t.Errorf("a Conn with a value: %v allocations, want 2 (it and its box)", n)
	}
}
