package loop

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/goid"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
)

// ErrStopped is returned by Post after Stop.
var ErrStopped = errors.New("loop stopped")

// Config configures a Loop.
type Config struct {
	// Provider lends buffers to receives submitted without one.
	Provider poller.Provider
	// Clock tells the time; nil means the wall clock.
	Clock Clock
	// Flush, if set, runs on the loop goroutine at the end of every
	// iteration, before the loop sleeps: the place to hand out the
	// iteration's results in one batch. It reports whether it handed work
	// to another goroutine.
	Flush func() bool
	// Backend chooses the kernel interface; GALE_BACKEND overrides it.
	Backend Backend
	// ZeroCopy, where the backend has zero-copy sends (io_uring), makes
	// stream sends of at least this many bytes zero-copy; 0 means none.
	ZeroCopy int
	// Open, if set, creates the backend instead; tests inject faults
	// through it.
	Open Opener
	// Fault, if set, runs on the loop goroutine when the backend fails
	// (Wait returns an error the loop cannot go on from), before the loop
	// ends: the owner closes what it serves there and reports the error.
	// The tasks posted before the failure run after it, so that none is
	// lost; posts after it fail with ErrStopped.
	Fault func(l *Loop, err error)
}

// Loop is one event loop. See the package documentation for which methods
// are safe from other goroutines.
type Loop struct {
	be     poller.Backend
	clock  Clock
	flush  func() bool
	tasks  taskQueue
	spare  []Task
	timers timerHeap
	slots  slotTable
	now    time.Time
	fresh  bool // now was read since the loop last woke (complete)

	yieldAt time.Time // when the loop last passed through the scheduler (yield.go)

	sleeping atomic.Bool // the loop is in, or about to enter, Wait
	wakeSig  atomic.Bool // a wake-up was sent since the loop last woke
	dispatch func(*poller.Completion)
	exiting  bool
	gid      atomic.Uint64 // the loop goroutine's ID, for OnLoop
	done     chan struct{}
	stopOnce sync.Once
	fault    error // the backend error that ended the loop, if any
	onFault  func(*Loop, error)
}

// New creates a loop and its backend. Start runs it.
func New(cfg Config) (*Loop, error) {
	be, err := open(&cfg)
	if err != nil {
		return nil, err
	}
	l := &Loop{be: be, clock: cfg.Clock, flush: cfg.Flush, onFault: cfg.Fault, done: make(chan struct{})}
	if l.clock == nil {
		l.clock = wallClock{}
	}
	l.dispatch = l.complete
	l.now = l.clock.Now()
	return l, nil
}

// Start runs the loop on a new goroutine.
func (l *Loop) Start() { go l.run() }

// Post hands t to the loop. It fails with ErrStopped once Stop was called;
// t then never runs. Safe from any goroutine.
func (l *Loop) Post(t Task) error {
	if !l.tasks.push(t, false) {
		return ErrStopped
	}
	l.wake()
	return nil
}

func (l *Loop) wake() {
	if l.sleeping.Load() && l.wakeSig.CompareAndSwap(false, true) {
		if h := testHookWake; h != nil {
			h()
		}
		l.be.Wake()
	}
}

// testHookWake, set by tests, runs between the decision to wake the loop
// and the wake-up.
var testHookWake func()

// Stop runs final on the loop after every task posted before it, ends the
// loop and releases its backend. It waits until the loop goroutine has
// returned. Later calls only wait. Safe from any goroutine, but not from
// the loop goroutine itself.
func (l *Loop) Stop(final func(*Loop)) {
	l.stopOnce.Do(func() {
		l.tasks.push(Func(func(l *Loop) {
			if final != nil {
				final(l)
			}
			l.exiting = true
		}), true)
		l.wake()
	})
	<-l.done
}

// Done is closed when the loop goroutine has returned.
func (l *Loop) Done() <-chan struct{} { return l.done }

// Err returns the backend error that ended the loop, if one did.
func (l *Loop) Err() error {
	<-l.done
	return l.fault
}

// Kind names the loop's backend. Safe from any goroutine.
func (l *Loop) Kind() poller.Kind { return l.be.Kind() }

// Traits returns what the loop's backend does beyond the contract; an
// owner adapts to them, never to Kind.
func (l *Loop) Traits() poller.Traits { return l.be.Traits() }

// Now returns the time the loop last woke at (read once per iteration,
// before any completion of that wake-up is delivered). Loop goroutine
// only.
func (l *Loop) Now() time.Time { return l.now }

// Attach adds fd to the backend under a new tag whose completions go to o.
// Loop goroutine only.
func (l *Loop) Attach(fd int, stream bool, o Owner) (poller.Tag, error) {
	tag := l.slots.alloc(o)
	if err := l.be.Add(fd, tag, stream); err != nil {
		l.slots.release(tag)
		return 0, err
	}
	return tag, nil
}

// Release removes tag from the backend and frees its slot; completions
// still in flight for it are dropped. The caller closes the descriptor.
// Loop goroutine only.
func (l *Loop) Release(tag poller.Tag) error {
	if l.slots.lookup(tag) == nil {
		return nil
	}
	l.slots.release(tag)
	return l.be.Remove(tag)
}

// Owners calls f with the owner of every attached descriptor, the last
// attached first (by slot); f may release tags, its own or others'. Loop
// goroutine only.
func (l *Loop) Owners(f func(Owner)) { l.slots.each(f) }

// Conns returns the number of attached descriptors. Loop goroutine only.
func (l *Loop) Conns() int { return l.slots.used }

// Timers returns the number of scheduled timers. Loop goroutine only.
func (l *Loop) Timers() int { return len(l.timers) }

func (l *Loop) complete(c *poller.Completion) {
	if !l.fresh {
		// The first completion since the loop woke: owners stamp
		// activity and schedule timers from Now, which must be the time
		// it woke at, not the time it went to sleep.
		l.now, l.fresh = l.clock.Now(), true
	}
	if o := l.slots.lookup(c.Tag); o != nil {
		o.Complete(l, Completion{c})
		return
	}
	// Stale: the owner released its tag after the operation completed.
	// An accepted connection has no one to take it: close it, or it leaks
	// (a listener closed by Shutdown right after an accept did).
	if c.Op == poller.OpAccept && c.Err == 0 {
		sock.Close(c.N)
	}
}

func (l *Loop) run() {
	l.gid.Store(goid.Current())
	defer close(l.done)
	defer l.be.Close()
	yielded := false
	for {
		l.runTasks()
		if l.exiting {
			return
		}
		l.fireTimers(l.now)
		handed := l.flush != nil && l.flush()
		if handed && !yielded {
			// The goroutine just readied (a WaitIO consumer) sits in this
			// P's run-next slot, and would wait there while the loop
			// blocks in the kernel until the scheduler notices. Yield so
			// it runs now; what it submits is then found by the next
			// iteration without a wake-up system call. Once per poll, so
			// a steady flow of results cannot starve the backend.
			yielded = true
			runtime.Gosched()
			continue
		}
		yielded = false
		if !l.poll() {
			return
		}
	}
}

// poll waits for the backend's completions once, and dispatches them. It
// reports false when the backend failed and the loop has ended.
func (l *Loop) poll() bool {
	due := l.yieldDue()
	timeout := l.timeout(l.now)
	if due {
		// A wait that does not block is not a sleep: posters need not
		// wake it, and the next iteration runs what they post.
		timeout = 0
	} else {
		l.sleeping.Store(true)
		if l.tasks.pending() {
			timeout = 0
		}
	}
	l.fresh = false
	err := l.be.Wait(timeout, l.dispatch)
	l.sleeping.Store(false)
	l.wakeSig.Store(false)
	if !l.fresh {
		l.now = l.clock.Now()
	}
	if err != nil {
		l.fail(err)
		return false
	}
	if due {
		// After the wait, which submitted what this iteration queued:
		// the yield holds nothing back from the kernel.
		if h := testHookYield; h != nil {
			h()
		}
		runtime.Gosched()
	}
	return true
}

// fail ends the loop after its backend failed with err: the owner's
// Fault hook closes what the loop serves, then the tasks already posted
// run (they find their owners closed) and their results are flushed.
func (l *Loop) fail(err error) {
	l.fault = err
	if l.onFault != nil {
		l.onFault(l, err)
	}
	l.tasks.push(nil, true) // refuse further posts
	l.runTasks()
	if l.flush != nil {
		l.flush()
	}
}

func (l *Loop) runTasks() {
	batch := l.tasks.drain(l.spare)
	for i, t := range batch {
		if t != nil {
			t.Run(l)
		}
		batch[i] = nil
	}
	l.spare = batch[:0]
}
