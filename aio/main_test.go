package aio_test

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// leakWait bounds how long TestMain waits for goroutines and descriptors to
// wind down: loops exit and runtime cleanups run asynchronously after the
// Close that triggered them.
const leakWait = 5 * time.Second

// goroutineSlack is how many goroutines above the starting count are not
// a leak. runtime.NumGoroutine counts the runtime's finalizer and cleanup
// goroutines while they run a user function (runtime.isSystemGoroutine),
// and the standard library starts a few goroutines lazily and keeps them
// for the life of the process (os/signal's watcher, for one). Neither is
// ours to stop; two covers them. A leaked loop or WaitIO goroutine per
// test, the failure this check exists for, quickly exceeds it.
const goroutineSlack = 2

// TestMain runs the tests, then fails the run if they left goroutines or
// descriptors behind. Every test of the package must therefore release
// what it opens (watchers, listeners, connections), with t.Cleanup.
func TestMain(m *testing.M) {
	startNetpoll()
	fds0, haveFDs := openFDs()
	g0 := runtime.NumGoroutine()
	code := m.Run()
	if msg := waitForLeaks(g0, fds0, haveFDs); msg != "" {
		fmt.Fprintf(os.Stderr, "FAIL: aio tests leaked resources:\n%s", msg)
		code = 1
	}
	os.Exit(code)
}

// startNetpoll makes the runtime open its network poller (an epoll or
// kqueue descriptor and a wake-up descriptor, kept for the life of the
// process) before the starting count, so they are not taken for a leak.
func startNetpoll() {
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
}

// waitForLeaks polls until at most g0+goroutineSlack goroutines and at
// most len(fds0) descriptors remain, for up to leakWait. It returns a
// report of what is left, or "" when nothing leaked.
func waitForLeaks(g0 int, fds0 map[int]string, haveFDs bool) string {
	deadline := time.Now().Add(leakWait)
	for {
		runtime.GC()
		g := runtime.NumGoroutine()
		fds, _ := openFDs()
		goroutinesOK := g <= g0+goroutineSlack
		fdsOK := !haveFDs || len(fds) <= len(fds0)
		if goroutinesOK && fdsOK {
			return ""
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			if !goroutinesOK {
				fmt.Fprintf(&b, "goroutines: %d at start, %d after the tests (%d allowed)\n%s\n",
					g0, g, g0+goroutineSlack, allStacks())
			}
			if !fdsOK {
				fmt.Fprintf(&b, "file descriptors: %d at start, %d after the tests; new:\n%s",
					len(fds0), len(fds), describeFDs(newFDs(fds0, fds)))
			}
			return b.String()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// openFDs returns the process's open descriptors and their readlink
// targets, from /proc/self/fd. ok is false where that does not exist.
// Entries that vanish while being read (the directory's own descriptor)
// are left out.
func openFDs() (fds map[int]string, ok bool) {
	const dir = "/proc/self/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	fds = make(map[int]string, len(entries))
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		fds[n] = target
	}
	return fds, true
}

// newFDs returns the entries of now that were not in before, comparing
// number and target (a reused number with another target is new).
func newFDs(before, now map[int]string) map[int]string {
	added := make(map[int]string)
	for fd, target := range now {
		if before[fd] != target {
			added[fd] = target
		}
	}
	return added
}

func describeFDs(fds map[int]string) string {
	keys := make([]int, 0, len(fds))
	for fd := range fds {
		keys = append(keys, fd)
	}
	sort.Ints(keys)
	var b strings.Builder
	for _, fd := range keys {
		fmt.Fprintf(&b, "\tfd %d -> %s\n", fd, fds[fd])
	}
	return b.String()
}

func allStacks() []byte {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
