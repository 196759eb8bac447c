package sock

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// SetAffinity locks the calling goroutine to its OS thread and pins that
// thread to cpu with sched_setaffinity(2). The lock is never undone: the
// goroutine keeps the thread for its life.
func SetAffinity(cpu int) error {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set)
}
