package loop

import "time"

// yieldEvery bounds how long a loop goes without passing through the Go
// scheduler.
//
// A loop that blocks only in the kernel (epoll_wait, io_uring_enter)
// comes back from each wait on the fast path, so its processor never
// schedules a goroutine and its scheduling tick stands still. The
// runtime's monitor (sysmon) takes a tick that stands still for 10 ms
// for a goroutine that has run too long: at each of its rounds it asks
// for a preemption (a signal to the thread), takes the processor back if
// the loop is in a system call, whether or not another one is idle, and
// keeps itself polling every 20 µs instead of backing off. On the
// 50-connection ping-pong that monitor cost the engine about an eighth
// of its CPU (13,000-15,000 of its sleeps and 230 signals in 3 s), and
// for a loop locked to its thread each preemption is a switch to another
// thread and back.
//
// Passing through the scheduler by choice, half as often as that limit,
// keeps the tick moving: the monitor then sleeps for up to 10 ms at a
// time (300-600 sleeps in 3 s). It costs one non-blocking wait and one
// runtime.Gosched every 5 ms on a busy loop.
const yieldEvery = 5 * time.Millisecond

// yieldDue reports whether the loop should pass through the scheduler in
// this iteration and, if so, counts the yield as made at l.now. The loop
// goroutine only.
func (l *Loop) yieldDue() bool {
	if l.now.Sub(l.yieldAt) < yieldEvery {
		return false
	}
	l.yieldAt = l.now
	return true
}

// testHookYield, set by tests, runs on the loop goroutine at each yield.
var testHookYield func()
