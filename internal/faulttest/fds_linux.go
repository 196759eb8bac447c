package faulttest

import (
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// MaxFillLimit is the largest open-file limit Exhaust fills: beyond it,
// filling the table would take too long for a unit test.
const MaxFillLimit = 100_000

// Exhaustion holds the descriptors that fill the process's table.
type Exhaustion struct {
	fds  []int
	once sync.Once
}

// Exhaust fills the process's descriptor table, up to the real open-file
// limit (RLIMIT_NOFILE), with duplicates of one /dev/null descriptor,
// then frees keep of them: from then on, the process can open keep more
// descriptors and the next fails with EMFILE. Release, or the end of t,
// frees them all. It skips t where the limit is above MaxFillLimit.
func Exhaust(t testing.TB, keep int) *Exhaustion {
	t.Helper()
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("getrlimit(RLIMIT_NOFILE) = %v", err)
	}
	if lim.Cur > MaxFillLimit {
		t.Skipf("the open-file limit is %d: filling a table that large would take too long (at most %d)", lim.Cur, MaxFillLimit)
	}
	base, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open(/dev/null) = %v", err)
	}
	x := &Exhaustion{fds: []int{base}}
	t.Cleanup(x.Release)
	for {
		fd, err := unix.FcntlInt(uintptr(base), unix.F_DUPFD_CLOEXEC, 0)
		if err == unix.EMFILE {
			break
		}
		if err != nil {
			x.Release()
			t.Fatalf("dup = %v after %d descriptors, want EMFILE at the limit (%d)", err, len(x.fds), lim.Cur)
		}
		x.fds = append(x.fds, fd)
	}
	for range min(keep, len(x.fds)) {
		unix.Close(x.fds[len(x.fds)-1])
		x.fds = x.fds[:len(x.fds)-1]
	}
	return x
}

// Len returns how many descriptors fill the table.
func (x *Exhaustion) Len() int { return len(x.fds) }

// Release closes the descriptors. Idempotent.
func (x *Exhaustion) Release() {
	x.once.Do(func() {
		for _, fd := range x.fds {
			unix.Close(fd)
		}
	})
}

// CPUTime returns the CPU time, user and system, the process has used
// (getrusage(2), RUSAGE_SELF).
func CPUTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
