package websocket

import "testing"

// TestAcceptKey checks RFC 6455 §1.3's example.
func TestAcceptKey(t *testing.T) {
	if got, want := acceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Errorf("acceptKey = %q, want %q", got, want)
	}
}
