package loop

import (
	"sync"
	"sync/atomic"
)

// Task is work posted to a loop. Run is called on the loop goroutine.
type Task interface {
	Run(l *Loop)
}

// Func adapts a function to Task. Converting a closure allocates; hot paths
// post pointer types that implement Task instead.
type Func func(l *Loop)

// Run calls f(l).
func (f Func) Run(l *Loop) { f(l) }

// taskQueue is a multi-producer, single-consumer queue: producers append
// under mu, the loop swaps the whole slice out in one step.
type taskQueue struct {
	mu     sync.Mutex
	items  []Task
	closed bool
	n      atomic.Int32 // len(items), readable without mu
}

// push appends t unless the queue is closed; close and push of the final
// task happen together so nothing can follow it.
func (q *taskQueue) push(t Task, final bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, t)
	q.n.Store(int32(len(q.items)))
	q.closed = final
	return true
}

// drain swaps the queued tasks into spare and returns them.
func (q *taskQueue) drain(spare []Task) []Task {
	q.mu.Lock()
	items := q.items
	q.items = spare[:0]
	q.n.Store(0)
	q.mu.Unlock()
	return items
}

func (q *taskQueue) pending() bool { return q.n.Load() > 0 }
