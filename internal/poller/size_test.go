//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package poller

import (
	"testing"
	"unsafe"
)

// TestFDStateSize holds the readiness backends' record of a descriptor to
// 24 bytes: what an operation in flight keeps of its buffers is in an
// fdIO, taken only while one holds a buffer and named by an index.
func TestFDStateSize(t *testing.T) {
	if n := unsafe.Sizeof(fdState{}); n > 24 {
		t.Errorf("an fdState is %d bytes, want at most 24", n)
	}
}
