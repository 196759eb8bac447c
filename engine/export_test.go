package engine

import (
	"sync"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// ManualClock is a clock that moves only when a test advances it.
type ManualClock = loop.ManualClock

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return loop.NewManualClock(start) }

// WithClock sets the clock the engine's loops read. Unless o sets
// CloseLinger, connections close without lingering: a linger ends on
// that clock, which only the test moves.
func WithClock(o Options, c *ManualClock) Options {
	o.clock = c
	if o.CloseLinger == 0 {
		o.CloseLinger = -1
	}
	return o
}

// WithBackend wraps every loop's backend with wrap, for fault injection.
func WithBackend(o Options, wrap func(poller.Backend) poller.Backend) Options {
	o.open = func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.Open(p)
		if err != nil {
			return nil, err
		}
		return wrap(be), nil
	}
	return o
}

// Poke makes every loop run full iterations until its timers have been
// checked against a clock advanced before the call, and waits for them.
// An iteration runs its tasks, then fires its timers against the time
// its previous wait ended: the first task may find that time older than
// the advance (the loop was not waiting when the clock moved), and the
// second runs before that iteration's timers, so it takes a third
// (TestAcceptEMFILE failed once, on a loaded machine, with two).
func (e *Engine) Poke() {
	for range 3 {
		var wg sync.WaitGroup
		for _, lp := range e.loops {
			wg.Add(1)
			if lp.l.Post(loop.Func(func(*loop.Loop) { wg.Done() })) != nil {
				wg.Done()
			}
		}
		wg.Wait()
	}
}

// PooledOutput returns the bytes of output chunks the engine keeps free.
func (e *Engine) PooledOutput() int { return e.chunks.pooled() }

// HasTimers reports whether c holds its timers (on its loop).
func HasTimers(c *Conn) bool {
	has := make(chan bool, 1)
	c.Execute(func(c *Conn) { has <- c.timers != nil })
	return <-has
}

// InputHeld returns the capacity of the input buffer c holds between
// callbacks (the bytes its handler left, and the room kept with them),
// read on its loop.
func InputHeld(c *Conn) int {
	held := make(chan int, 1)
	if c.Execute(func(c *Conn) { held <- cap(c.in.bytes()) }) != nil {
		return -1
	}
	return <-held
}

// HoldsQueue reports whether c holds an output queue.
func HoldsQueue(c *Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.q != nil
}

// OutputHeld returns the bytes of output chunks c's queue holds, read on
// its loop.
func OutputHeld(c *Conn) int {
	held := make(chan int, 1)
	if c.Execute(func(c *Conn) {
		c.mu.Lock()
		defer c.mu.Unlock()
		n := 0
		if c.q != nil {
			for _, ch := range c.q.out {
				n += len(ch.buf)
			}
		}
		held <- n
	}) != nil {
		return -1
	}
	return <-held
}
