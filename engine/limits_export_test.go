package engine

import "github.com/galeio/gale/internal/loop"

// The engine's defaults and fixed bounds, for TestLimits: the figures of
// SECURITY.md.

// Defaults returns o with its defaults filled in, as New does.
func Defaults(o Options) (Options, error) {
	err := o.setDefaults()
	return o, err
}

const (
	// DefaultKeepAlive is accepted connections' keep-alive period when
	// Options.TCPKeepAlive is 0.
	DefaultKeepAlive = defaultKeepAlive
	// MinBackoff and MaxBackoff bound a listener's wait after an accept
	// failed for want of resources.
	MinBackoff, MaxBackoff = minBackoff, maxBackoff
	// TrimInterval is how often the pools let go of what nobody took.
	TrimInterval = trimInterval
)

// InputLen returns the length and the capacity of the input c holds
// unconsumed between callbacks, read on its loop; -1, -1 once c is
// closed.
func InputLen(c *Conn) (n, capacity int) {
	got := make(chan [2]int, 1)
	if c.post(loop.Func(func(*loop.Loop) {
		if c.lbits.has(bClosed) {
			got <- [2]int{-1, -1}
			return
		}
		got <- [2]int{len(c.in.bytes()), cap(c.in.bytes())}
	})) != nil {
		return -1, -1
	}
	v := <-got
	return v[0], v[1]
}
