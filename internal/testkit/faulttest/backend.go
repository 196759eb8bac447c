package faulttest

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/poller"
)

// ErrBackend is the failure FailingWait's Wait returns.
var ErrBackend = errors.New("faulttest: injected backend failure")

// FailingWait wraps a backend whose Wait fails with ErrBackend once Fail
// is set: the loop above it must end cleanly and report the failure.
type FailingWait struct {
	poller.Backend
	Fail *atomic.Bool
}

// Wait fails once Fail is set, and waits as the wrapped backend otherwise.
func (b *FailingWait) Wait(d time.Duration, fn func(*poller.Completion)) error {
	if b.Fail.Load() {
		return ErrBackend
	}
	return b.Backend.Wait(d, fn)
}

// FailFirst returns a wrapper for a watcher's or an engine's backends
// that makes the first one a FailingWait on fail, and leaves the others.
func FailFirst(fail *atomic.Bool) func(poller.Backend) poller.Backend {
	var made atomic.Int32
	return func(b poller.Backend) poller.Backend {
		if made.Add(1) == 1 {
			return &FailingWait{Backend: b, Fail: fail}
		}
		return b
	}
}
