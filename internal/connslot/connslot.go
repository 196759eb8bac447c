// Package connslot gives the protocol layers over engine (httpd) a value
// of their own on an engine.Conn, beside its Context, which is the user's:
// httpd routes an upgraded connection to its Protocol through this slot,
// so that a user's SetContext on the connection Upgrade returned cannot
// take it off its protocol.
//
// engine sets the hooks in its init; a layer that imports engine finds
// them set. Both may be called from any goroutine.
package connslot

var (
	// Get returns the slot of c, an *engine.Conn, or its Context if no
	// slot was set.
	Get func(c any) any
	// Set sets the slot of c, an *engine.Conn. The first Set hands the
	// Context to the user: nil until SetContext.
	Set func(c, v any)
)
