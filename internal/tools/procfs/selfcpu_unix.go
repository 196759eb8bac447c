//go:build unix

package procfs

import (
	"syscall"
	"time"
)

// SelfCPU returns the CPU time (user + system) this process has used,
// from getrusage(2); 0 if the call fails.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
