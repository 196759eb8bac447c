package goid

import "testing"

// Two goroutines have different IDs, and one has the same ID each time.
func TestCurrent(t *testing.T) {
	a, b := Current(), Current()
	if a == 0 || a != b {
		t.Fatalf("Current() = %d, then %d: want the same non-zero ID", a, b)
	}
	other := make(chan uint64)
	go func() { other <- Current() }()
	if o := <-other; o == 0 || o == a {
		t.Fatalf("another goroutine's ID = %d, this one's %d: want two non-zero IDs", o, a)
	}
}
