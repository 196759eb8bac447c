package engine

import "testing"

// TestSlot checks a protocol layer's slot against the user's Context: the
// first Set hands the Context to the user (nil until set), and neither
// overwrites the other, in either order.
func TestSlot(t *testing.T) {
	layer1, layer2, user := new(int), new(int), "user's"
	c := &Conn{ctx: "before the layer"}
	c.setSlot(layer1)
	if got := c.Context(); got != nil {
		t.Errorf("Context after the first setSlot = %v, want nil", got)
	}
	if got := c.slot(); got != layer1 {
		t.Errorf("slot = %v, want layer1", got)
	}
	c.SetContext(nil)
	if got := c.slot(); got != layer1 {
		t.Errorf("slot after SetContext(nil) = %v, want layer1", got)
	}
	c.setSlot(layer2)
	c.SetContext(user)
	if got := c.slot(); got != layer2 {
		t.Errorf("slot after SetContext = %v, want layer2", got)
	}
	if got := c.Context(); got != user {
		t.Errorf("Context = %v, want %q", got, user)
	}
	c.setSlot(layer1)
	if got, ctx := c.slot(), c.Context(); got != layer1 || ctx != user {
		t.Errorf("after setSlot(layer1): slot, Context = %v, %v, want layer1, %q", got, ctx, user)
	}
	c.SetContext(nil)
	if got, ctx := c.slot(), c.Context(); got != layer1 || ctx != nil {
		t.Errorf("after SetContext(nil): slot, Context = %v, %v, want layer1, nil", got, ctx)
	}
}
