package loop

import (
	"sync"
	"time"
)

// Clock tells a Loop the time. Tests inject a manual clock to drive timers
// without sleeping; the loop reads it once per iteration.
type Clock interface {
	Now() time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when Advance is called: tests use
// it to drive timers without sleeping. Safe from any goroutine.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Wall is the system clock, the default of Config.Clock.
var Wall Clock = wallClock{}
