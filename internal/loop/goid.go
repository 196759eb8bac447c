package loop

import "runtime"

// goid returns the calling goroutine's ID, read from the header of its
// stack trace ("goroutine 18 [running]:"). Go offers no API for it; this
// costs about a microsecond and is used only on rare control paths, to
// tell whether a call comes from a loop's own goroutine.
func goid() uint64 {
	var buf [32]byte
	n := runtime.Stack(buf[:], false)
	const prefix = len("goroutine ")
	var id uint64
	for _, b := range buf[prefix:n] {
		if b < '0' || b > '9' {
			break
		}
		id = id*10 + uint64(b-'0')
	}
	return id
}

// OnLoop reports whether the caller runs on l's goroutine: a method that
// waits for the loop must not wait when called from it. Safe from any
// goroutine.
func (l *Loop) OnLoop() bool {
	id := l.gid.Load()
	return id != 0 && goid() == id
}
