package engine_test

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

// etLeakWait bounds how long TestMain waits for the goroutines and
// descriptors of the tests to go away: a stopped loop's goroutine returns,
// and the runtime closes files, a little after the call that ended them.
const etLeakWait = 5 * time.Second

// etGoroutineSlack is how many goroutines above the starting count are not
// taken for a leak: runtime.NumGoroutine counts the finalizer and cleanup
// goroutines while they run user code, and the standard library may start
// a goroutine on first use that lives as long as the process. (Measured:
// after these tests the count is back at its start exactly.) A leaked
// loop cannot hide in this slack: it also holds an epoll instance and an
// eventfd, which the descriptor check reports.
const etGoroutineSlack = 1

// TestMain runs the tests and then fails the run if they left goroutines
// or descriptors behind: every engine, listener and connection a test
// opens must be released by its cleanup.
func TestMain(m *testing.M) {
	// The runtime opens its network poller's descriptors (an epoll
	// instance and an eventfd) the first time a pollable file is used, and
	// keeps them: open them before counting.
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	fds0, haveFDs := etOpenFDs()
	g0 := runtime.NumGoroutine()
	code := m.Run()
	if msg := etCheckLeaks(g0, fds0, haveFDs); msg != "" {
		fmt.Fprintf(os.Stderr, "FAIL: engine tests leaked:\n%s", msg)
		code = 1
	}
	os.Exit(code)
}

// etCheckLeaks polls, for up to etLeakWait, until the goroutine and
// descriptor counts are back at their starting values, and returns a
// report of what is left over, or "".
func etCheckLeaks(g0 int, fds0 map[int]string, haveFDs bool) string {
	deadline := time.Now().Add(etLeakWait)
	for {
		runtime.GC()
		g := runtime.NumGoroutine()
		fds, _ := etOpenFDs()
		gOK := g <= g0+etGoroutineSlack
		fdOK := !haveFDs || len(fds) <= len(fds0)
		if gOK && fdOK {
			return ""
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			if !gOK {
				fmt.Fprintf(&b, "goroutines: %d at the start, %d at the end (%d allowed):\n%s\n",
					g0, g, g0+etGoroutineSlack, etStacks())
			}
			if !fdOK {
				fmt.Fprintf(&b, "descriptors: %d at the start, %d at the end; new ones:\n", len(fds0), len(fds))
				for _, fd := range etSortedFDs(fds) {
					if fds0[fd] != fds[fd] {
						fmt.Fprintf(&b, "\tfd %d -> %s\n", fd, fds[fd])
					}
				}
			}
			return b.String()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// etOpenFDs maps the process's open descriptors to their targets, read
// from /proc/self/fd; ok is false where that does not exist. The
// directory's own descriptor vanishes before its link is read, so it is
// not counted.
func etOpenFDs() (fds map[int]string, ok bool) {
	const dir = "/proc/self/fd"
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	fds = make(map[int]string, len(ents))
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		target, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		fds[fd] = target
	}
	return fds, true
}

func etSortedFDs(fds map[int]string) []int {
	keys := make([]int, 0, len(fds))
	for fd := range fds {
		keys = append(keys, fd)
	}
	sort.Ints(keys)
	return keys
}

func etStacks() []byte {
	buf := make([]byte, 64<<10)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
