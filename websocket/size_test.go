package websocket

import (
	"testing"
	"unsafe"
)

// TestConnSize holds an idle connection's Conn to its 80-byte size class:
// what few connections need (a subprotocol, a stream, a client's
// handshake, the close's reason and deadline) lives in connRare, made on
// first need, permessage-deflate's state behind a pointer, and the
// user's value in a box made by the first SetContext.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 80 {
		t.Errorf("a Conn is %d bytes, want at most 80 (its size class)", n)
	}
}
