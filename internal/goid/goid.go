// Package goid tells goroutines apart: a loop, or a pool's worker, must
// know whether a call comes from its own goroutine, where waiting for
// itself would never end.
package goid

import "runtime"

// Current returns the calling goroutine's ID, read from the header of its
// stack trace ("goroutine 18 [running]:"). Go offers no API for it; this
// costs about a microsecond, so it belongs on rare control paths and
// once per goroutine, not on a hot path. IDs are never 0.
func Current() uint64 {
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
