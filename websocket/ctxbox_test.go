package websocket

import "testing"

// TestContextBox checks the user's value through its box: nil until set,
// each SetContext's value after it, nil again after SetContext(nil), and
// UpgradeWith's and DialWith's value (boxed) from the start.
func TestContextBox(t *testing.T) {
	c := new(Conn)
	if got := c.Context(); got != nil {
		t.Errorf("Context of a new Conn = %v, want nil", got)
	}
	for _, v := range []any{1, "two", nil, 3.0} {
		c.SetContext(v)
		if got := c.Context(); got != v {
			t.Errorf("Context after SetContext(%v) = %v", v, got)
		}
	}
	if got := (&Conn{ctx: boxed("given")}).Context(); got != "given" {
		t.Errorf("Context of a Conn made with a value = %v, want %q", got, "given")
	}
	if boxed(nil) != nil {
		t.Error("boxed(nil) != nil: a Conn made with no value would hold a box")
	}
}
