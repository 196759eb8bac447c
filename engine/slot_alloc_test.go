//go:build !race

package engine

import "testing"

// TestSlotAllocs checks that a slot costs nothing while the user sets no
// value: a connection a protocol layer took over (an upgraded WebSocket)
// kept a 32-byte record for that before.
func TestSlotAllocs(t *testing.T) {
	layer1, layer2 := new(int), new(int)
	c := new(Conn)
	n := testing.AllocsPerRun(100, func() {
		c.setSlot(layer1)
		c.setSlot(layer2)
	})
	if n > 0 {
		t.Errorf("setSlot: %v allocations, want 0", n)
	}
}
