package aio

import (
	"net"
	"sync"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// ManualClock is a clock that moves only when a test advances it.
type ManualClock = loop.ManualClock

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return loop.NewManualClock(start) }

// NewWatcherClock returns a watcher whose loops read time from clock.
func NewWatcherClock(cfg Config, clock *ManualClock) (*Watcher, error) {
	cfg.clock = clock
	return NewWatcherConfig(cfg)
}

// Poke makes every loop run two full iterations, so that timers have been
// checked against a clock advanced before the call, and waits for them.
func (w *Watcher) Poke() {
	w.poke()
	w.poke()
}

func (w *Watcher) poke() {
	var wg sync.WaitGroup
	for _, lp := range w.loops {
		wg.Add(1)
		if lp.l.Post(loop.Func(func(*loop.Loop) { wg.Done() })) != nil {
			wg.Done()
		}
	}
	wg.Wait()
}

// Timers returns the number of timers scheduled on the loops. It waits for
// each loop to answer.
func (w *Watcher) Timers() int {
	n := 0
	for _, lp := range w.loops {
		ch := make(chan int, 1)
		if lp.l.Post(loop.Func(func(l *loop.Loop) { ch <- l.Timers() })) == nil {
			n += <-ch
		}
	}
	return n
}

// DelegateAndStopLoops delegates nc without posting a request, then stops
// every loop without closing the watcher: the state in which a Free that
// passed its closed check finds its conn's loop refusing requests, and the
// conn never reached the loop.
func (w *Watcher) DelegateAndStopLoops(nc net.Conn) error {
	if _, err := w.register(nc); err != nil {
		return err
	}
	for _, lp := range w.loops {
		lp.l.Stop(func(l *loop.Loop) { lp.stop(l, nil) })
	}
	return nil
}

// SetAfterDup makes every registration call f right after it duplicated
// the caller's descriptor, until restore is called.
func SetAfterDup(f func()) (restore func()) {
	afterDup.Store(&f)
	return func() { afterDup.Store(nil) }
}

// SetAfterEnter makes every registration that entered its duplicate call
// f before it closes the caller's conn, until restore is called.
func SetAfterEnter(f func()) (restore func()) {
	afterEnter.Store(&f)
	return func() { afterEnter.Store(nil) }
}

// NewWatcherBackend returns a watcher whose loops' backends are wrapped by
// wrap, for fault injection.
func NewWatcherBackend(cfg Config, wrap func(poller.Backend) poller.Backend) (*Watcher, error) {
	cfg.open = func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.OpenKind(cfg.Backend, p)
		if err != nil {
			return nil, err
		}
		return wrap(be), nil
	}
	return NewWatcherConfig(cfg)
}
