//go:build !race

package websocket

import "testing"

// TestContextBoxAllocs checks that only the first SetContext makes the
// box: a handler that updates its connection's value does not allocate
// for it each time.
func TestContextBoxAllocs(t *testing.T) {
	c := new(Conn)
	a, b := new(int), new(int)
	c.SetContext(a)
	if n := testing.AllocsPerRun(100, func() { c.SetContext(b); c.SetContext(a) }); n > 0 {
		t.Errorf("SetContext of a Conn with a value: %v allocations, want 0", n)
	}
}
