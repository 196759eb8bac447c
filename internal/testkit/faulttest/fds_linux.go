package faulttest

import (
	"os"
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
	if _, err := x.fill(); err != nil {
		x.Release()
		t.Fatalf("dup = %v after %d descriptors, want EMFILE at the limit (%d)", err, len(x.fds), lim.Cur)
	}
	for range min(keep, len(x.fds)) {
		unix.Close(x.fds[len(x.fds)-1])
		x.fds = x.fds[:len(x.fds)-1]
	}
	return x
}

// fill takes descriptors until the table is full, and returns how many
// it took.
func (x *Exhaustion) fill() (int, error) {
	n := 0
	for {
		fd, err := unix.FcntlInt(uintptr(x.fds[0]), unix.F_DUPFD_CLOEXEC, 0)
		if err == unix.EMFILE {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		x.fds = append(x.fds, fd)
		n++
	}
}

// Refill takes again the descriptors something else in the process freed
// since Exhaust (a closing that was still under way), so that the table
// is full again, and returns how many. Only for an Exhaust with keep 0.
func (x *Exhaustion) Refill() int {
	n, _ := x.fill()
	return n
}

// Settle waits, for at most two seconds, until the process's number of
// open descriptors has stayed the same for 100 ms: what earlier tests
// were still closing (an engine's loops winding down) is closed before a
// test fills the table, rather than freeing a slot in the middle of it.
func Settle(t testing.TB) {
	t.Helper()
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			return -1
		}
		return len(ents)
	}
	deadline := time.Now().Add(2 * time.Second)
	last, same := count(), 0
	for same < 5 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		if n := count(); n == last {
			same++
		} else {
			last, same = n, 0
		}
	}
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
