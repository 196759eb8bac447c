package websocket

import (
	"testing"
	"unsafe"
)

// TestConnSize holds an idle connection's Conn to its 96-byte size class:
// what few connections need (a subprotocol, a stream, a client's
// handshake, the close's reason and deadline) lives in connRare, made on
// first need, and permessage-deflate's state behind a pointer.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 96 {
		t.Errorf("a Conn is %d bytes, want at most 96 (its size class)", n)
	}
}
