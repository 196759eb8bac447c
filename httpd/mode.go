package httpd

// Mode chooses how a Server serves its connections.
type Mode int

const (
	// ModeLoop serves every connection from the engine's loops: no
	// goroutine per connection, a pooled one per request being handled.
	// It is the default.
	ModeLoop Mode = iota
	// ModeMixed serves a connection with net/http's own server (a
	// goroutine per connection) while fewer than Server.MixedThreshold
	// connections are open, and from the loops beyond (nbio's
	// IOModMixed). A connection stays where it started.
	ModeMixed
)

// DefaultMixedThreshold is Server.MixedThreshold's default.
const DefaultMixedThreshold = 1000

func (m Mode) String() string {
	switch m {
	case ModeLoop:
		return "loop"
	case ModeMixed:
		return "mixed"
	}
	return "Mode(?)"
}
