package aio

import (
	"sync/atomic"

	"github.com/galeio/gale/internal/loop"
)

// loopState is the watcher's part of one event loop: its swap buffer, the
// connections it serves, and the completions of the current iteration.
// Everything but the atomics belongs to the loop goroutine.
type loopState struct {
	w       *watcher
	l       *loop.Loop
	swap    swap
	out     []*request // completed this iteration; flushed to the watcher
	conns   loop.Set[*conn]
	starved []*conn // nil-buffer readers waiting for swap space

	// stranded holds the requests whose operation was in flight when the
	// watcher stopped for a failure; watcher.stop delivers them once the
	// loop has closed its backend, when the kernel no longer uses their
	// buffers.
	stranded []*request

	starving atomic.Bool // starved is not empty
	kicked   atomic.Bool // a resume task is posted
	resume   resumeTask
	stats    loopCounters
}

// loopCounters are read by Stats from any goroutine.
type loopCounters struct {
	pendingReads  atomic.Int64
	pendingWrites atomic.Int64
	bytesRead     atomic.Uint64
	bytesWritten  atomic.Uint64
	completions   atomic.Uint64
	swapBytes     atomic.Int64
}

func (lp *loopState) finish(r *request) {
	lp.out = append(lp.out, r)
}

// flush hands the iteration's completions to WaitIO in one batch and
// reports whether there were any.
func (lp *loopState) flush() bool {
	if len(lp.out) == 0 {
		return false
	}
	lp.stats.completions.Add(uint64(len(lp.out)))
	lp.stats.swapBytes.Store(int64(lp.swap.bytes()))
	lp.w.results.push(lp.out)
	clear(lp.out)
	lp.out = lp.out[:0]
	return true
}

func (lp *loopState) pending(k kind, d int64) {
	if k == kWrite {
		lp.stats.pendingWrites.Add(d)
	} else {
		lp.stats.pendingReads.Add(d)
	}
}

func (lp *loopState) addConn(c *conn) { lp.conns.Add(c) }

func (lp *loopState) removeConn(c *conn) { lp.conns.Remove(c) }

// starve parks c's head read until the swap buffer has space. WaitIO kicks
// the loop when it releases space; the check after setting starving closes
// the race with a release that happened just before.
func (lp *loopState) starve(c *conn) {
	c.starved = true
	lp.starved = append(lp.starved, c)
	lp.starving.Store(true)
	if lp.swap.hasSpace() {
		lp.kick()
	}
}

// kick asks the loop to retry its starved readers. Safe from any goroutine.
func (lp *loopState) kick() {
	if lp.kicked.CompareAndSwap(false, true) {
		lp.l.Post(&lp.resume)
	}
}

// resumeTask retries starved readers; one per loop, posted by kick.
type resumeTask struct{ lp *loopState }

func (t *resumeTask) Run(l *loop.Loop) {
	lp := t.lp
	lp.kicked.Store(false)
	starved := lp.starved
	lp.starved = nil
	lp.starving.Store(false)
	for _, c := range starved {
		c.starved = false
		if !c.released {
			c.startRead(l)
		}
	}
	clear(starved)
	if lp.starved == nil {
		lp.starved = starved[:0]
	}
}

// stop releases every connection of the loop, on the loop, when the
// watcher stops. After Close (a nil cause) pending requests are dropped:
// WaitIO reports the close. After a failure every one completes with the
// cause (see watcher.stop).
func (lp *loopState) stop(l *loop.Loop, cause error) {
	for c, ok := lp.conns.Last(); ok; c, ok = lp.conns.Last() {
		if cause == nil {
			c.abort(l, ErrWatcherClosed, false)
		} else {
			c.abort(l, cause, true)
		}
	}
	if cause == nil {
		lp.out = nil
		return
	}
	lp.flush()
}
