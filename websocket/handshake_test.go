package websocket

import "testing"

// TestAcceptKey checks RFC 6455 §1.3's example.
func TestAcceptKey(t *testing.T) {
	if got, want := acceptKey("dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Errorf("acceptKey = %q, want %q", got, want)
	}
}

// TestValidKey checks §4.2.1's rule: the base64 of 16 bytes, no more, no
// less.
func TestValidKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"dGhlIHNhbXBsZSBub25jZQ==", true},
		{"AAAAAAAAAAAAAAAAAAAAAA==", true},
		{"", false},
		{"dGhlIHNhbXBsZSBub25jZQ", false},       // no padding
		{"dGhlIHNhbXBsZSBub25jZSE=", false},     // 17 bytes
		{"dGhlIHNhbXBsZSBub25jZQ==AAAA", false}, // 19 bytes
		{"dGhlIHNhbXBsZSBub25jZ!==", false},     // not base64
		{"dGhlIHNhbXBsZSBub25j", false},         // 15 bytes
	} {
		if got := validKey(tc.key); got != tc.want {
			t.Errorf("validKey(%q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestAcceptKeyLong checks that a key longer than a valid one (a
// client's is always valid; this is the fallback) still hashes whole.
func TestAcceptKeyLong(t *testing.T) {
	a, b := acceptKey("dGhlIHNhbXBsZSBub25jZQ==x"), acceptKey("dGhlIHNhbXBsZSBub25jZQ==y")
	if a == b || len(a) != 28 {
		t.Errorf("acceptKey of two long keys = %q, %q, want two different 28-byte values", a, b)
	}
}
