package sock

import (
	"sync"
	"sync/atomic"
)

// FD is a descriptor that goroutines other than its owner may use, with
// the lifetime rule of the standard library's internal/poll.FD: every use
// of the number outside the owner is bracketed by Acquire and Release, and
// Close (or HandOff) takes effect only once the last such use has ended —
// at once when none is running, otherwise in the Release that ends the
// last one. No goroutine can therefore pass the number to the kernel after
// it was closed, when another file may already have taken it.
//
// The owner (the one goroutine that closes the FD, such as a loop) may use
// Sysfd without Acquire for as long as it has not called Close or HandOff.
//
// Close and HandOff act once: the first call wins, later ones report
// false and do nothing, so several goroutines that might each be the last
// to hold a descriptor may all call Close.
type FD struct {
	// state is users<<2 | handed | closed. closed is set by the first
	// Close or HandOff, handed too by a HandOff; once closed is set
	// Acquire fails, and the Release that brings users to zero carries out
	// the close or the hand-over. 32 bits (2^30 users at once) and the
	// hand-over's channel kept aside (handTos) keep an FD at 8 bytes, as
	// every connection holds one.
	state atomic.Uint32
	sysfd int32
}

const (
	fdClosed = 1
	fdHanded = 2
	fdUser   = 4
)

// handTos maps an FD handed off (*FD) to the channel its descriptor goes
// to (chan<- int), from the winning HandOff to the final Release. A
// hand-over is rare (a Detach), so the channel is kept here rather than
// in every FD.
var handTos sync.Map

// Init makes f hold fd. Call it before f is shared.
func (f *FD) Init(fd int) {
	f.state.Store(0)
	f.sysfd = int32(fd)
}

// Sysfd returns the descriptor, for the owner's use. Other goroutines
// use Acquire.
func (f *FD) Sysfd() int { return int(f.sysfd) }

// Acquire returns the descriptor and true unless f is closed; the caller
// may use the number until it calls Release, which it must then do once.
// Safe from any goroutine.
func (f *FD) Acquire() (int, bool) {
	for {
		s := f.state.Load()
		if s&fdClosed != 0 {
			return -1, false
		}
		if f.state.CompareAndSwap(s, s+fdUser) {
			return int(f.sysfd), true
		}
	}
}

// Release ends a use begun by Acquire. The last Release after Close
// closes the descriptor (or hands it over, after HandOff).
func (f *FD) Release() {
	if s := f.state.Add(^uint32(fdUser - 1)); s&^fdHanded == fdClosed {
		f.final(s)
	}
}

// Closed reports whether Close or HandOff was called.
func (f *FD) Closed() bool { return f.state.Load()&fdClosed != 0 }

// Close closes the descriptor once no goroutine uses it, and reports
// whether this call was the one that closed f.
func (f *FD) Close() bool { return f.shut(nil) }

// HandOff is Close that, instead of closing the descriptor, sends it to
// to once no goroutine uses it: to receives the number exactly once and
// must have room for it (a buffered channel). It reports whether this call
// was the one that closed f.
func (f *FD) HandOff(to chan<- int) bool { return f.shut(to) }

// shut marks f closed and arranges for the final step. The winner counts
// itself as a user while it records where the descriptor goes, so that no
// Release can carry out the final step before that is known.
func (f *FD) shut(to chan<- int) bool {
	for {
		s := f.state.Load()
		if s&fdClosed != 0 {
			return false
		}
		next := (s + fdUser) | fdClosed
		if to != nil {
			next |= fdHanded
		}
		if f.state.CompareAndSwap(s, next) {
			break
		}
	}
	if to != nil {
		handTos.Store(f, to)
	}
	f.Release()
	return true
}

// final closes the descriptor, or hands it over if state s says so.
func (f *FD) final(s uint32) {
	if s&fdHanded != 0 {
		to, _ := handTos.LoadAndDelete(f)
		to.(chan<- int) <- int(f.sysfd)
		return
	}
	Close(int(f.sysfd))
}
