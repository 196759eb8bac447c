package benchrun

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinProcess restricts every thread of this process to cpus. Threads
// made later inherit the mask of the thread that makes them, so the whole
// process stays on cpus.
func pinProcess(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pin thread %d to CPUs %v: %w", tid, cpus, err)
		}
	}
	return nil
}

// pinClient keeps the load generator off CPU 0, where -pin puts servers.
func pinClient() error {
	n := runtime.NumCPU()
	if n < 2 {
		return fmt.Errorf("-pin needs 2 CPUs or more, have %d", n)
	}
	var cpus []int
	for c := 1; c < n; c++ {
		cpus = append(cpus, c)
	}
	return pinProcess(cpus)
}
