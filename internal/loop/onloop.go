package loop

import "github.com/galeio/gale/internal/goid"

// OnLoop reports whether the caller runs on l's goroutine: a method that
// waits for the loop must not wait when called from it. Safe from any
// goroutine.
func (l *Loop) OnLoop() bool {
	id := l.gid.Load()
	return id != 0 && goid.Current() == id
}
