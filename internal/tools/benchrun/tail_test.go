package benchrun

import (
	"strings"
	"testing"
)

// TestTailWriter checks that a child's stderr tail keeps the last bytes.
func TestTailWriter(t *testing.T) {
	var w tailWriter
	w.Write([]byte(strings.Repeat("x", tailMax)))
	w.Write([]byte("cc: not found\n"))
	got := w.String()
	if !strings.HasSuffix(got, "cc: not found") || len(got) > tailMax {
		t.Errorf("tail = %d bytes ending %q, want at most %d ending with the last message", len(got), got[max(0, len(got)-20):], tailMax)
	}
}
