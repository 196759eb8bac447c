package loop

import "time"

// Clock tells a Loop the time. Tests inject a manual clock to drive timers
// without sleeping; the loop reads it once per iteration.
type Clock interface {
	Now() time.Time
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }
