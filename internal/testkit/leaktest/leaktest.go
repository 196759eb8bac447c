// Package leaktest checks that tests leave no goroutine or file
// descriptor behind: at the end of a test binary (Main, from TestMain) or
// of one test (Check). It is for tests only.
//
// Goroutines and descriptors wind down asynchronously (loops exit after
// Close returns, runtime cleanups run later), so both checks poll for a
// while before they report.
package leaktest

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

// Wait bounds how long a check waits for goroutines and descriptors to
// wind down.
const Wait = 5 * time.Second

// GoroutineSlack is how many goroutines above the starting count are not a
// leak. runtime.NumGoroutine counts the runtime's finalizer and cleanup
// goroutines while they run a user function, and the standard library
// starts a few goroutines lazily and keeps them (os/signal's watcher, for
// one). A leaked loop is caught anyway: it also holds an epoll instance
// and an eventfd.
const GoroutineSlack = 2

// Main runs the tests, then fails the binary if they left goroutines or
// descriptors behind. Call it from TestMain:
//
//	func TestMain(m *testing.M) { leaktest.Main(m) }
func Main(m *testing.M) {
	startNetpoll()
	s := snapshot()
	code := m.Run()
	if report := s.settle(); report != "" {
		fmt.Fprintf(os.Stderr, "FAIL: tests leaked:\n%s", report)
		code = 1
	}
	os.Exit(code)
}

// Check snapshots goroutines and descriptors now and, when t ends, fails
// it if more remain.
func Check(t testing.TB) {
	t.Helper()
	startNetpoll()
	s := snapshot()
	t.Cleanup(func() {
		if report := s.settle(); report != "" {
			t.Errorf("leaked:\n%s", report)
		}
	})
}

// startNetpoll makes the runtime open its network poller (kept for the
// life of the process) before a snapshot, so its descriptors are not
// taken for a leak.
func startNetpoll() {
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
}

type state struct {
	goroutines int
	fds        map[int]string
	haveFDs    bool
}

func snapshot() state {
	fds, ok := OpenFDs()
	return state{goroutines: runtime.NumGoroutine(), fds: fds, haveFDs: ok}
}

// settle polls until no more goroutines (beyond the slack) and no new
// descriptors remain, for up to Wait. It returns a report of what is
// left, or "".
func (s state) settle() string {
	deadline := time.Now().Add(Wait)
	for {
		runtime.GC()
		now := snapshot()
		gOK := now.goroutines <= s.goroutines+GoroutineSlack
		added := NewFDs(s.fds, now.fds)
		fdOK := !s.haveFDs || len(added) == 0
		if gOK && fdOK {
			return ""
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			if !gOK {
				fmt.Fprintf(&b, "goroutines: %d at the start, %d at the end (%d allowed)\n%s\n",
					s.goroutines, now.goroutines, s.goroutines+GoroutineSlack, stacks())
			}
			if !fdOK {
				fmt.Fprintf(&b, "descriptors: %d at the start, %d at the end; new ones:\n%s",
					len(s.fds), len(now.fds), Describe(added))
			}
			return b.String()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// OpenFDs returns the process's open descriptors with their readlink
// targets, from /proc/self/fd; ok is false where that does not exist, and
// on Windows, whose handles are no descriptors (under Wine the path
// reaches the Linux descriptors of Wine's own process instead).
func OpenFDs() (fds map[int]string, ok bool) {
	const dir = "/proc/self/fd"
	if runtime.GOOS == "windows" {
		return nil, false
	}
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
		if target, err := os.Readlink(dir + "/" + e.Name()); err == nil {
			fds[n] = target // the directory's own descriptor vanishes: skipped
		}
	}
	return fds, true
}

// NewFDs returns the entries of now not in before, by number and target
// (a number reused for another file is new).
func NewFDs(before, now map[int]string) map[int]string {
	added := make(map[int]string)
	for fd, target := range now {
		if before[fd] != target {
			added[fd] = target
		}
	}
	return added
}

// Describe lists descriptors with their targets, one a line; a TCP socket
// also shows its addresses and state, from /proc/net/tcp and tcp6.
func Describe(fds map[int]string) string {
	nums := make([]int, 0, len(fds))
	for fd := range fds {
		nums = append(nums, fd)
	}
	sort.Ints(nums)
	socks := tcpSockets()
	var b strings.Builder
	for _, fd := range nums {
		fmt.Fprintf(&b, "\tfd %d -> %s", fd, fds[fd])
		if inode, ok := strings.CutPrefix(fds[fd], "socket:["); ok {
			if d := socks[strings.TrimSuffix(inode, "]")]; d != "" {
				fmt.Fprintf(&b, " (tcp %s)", d)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// tcpSockets maps the inodes of the process's TCP sockets to "local ->
// remote, state st" in /proc/net/tcp's hexadecimal notation (state 01 is
// ESTABLISHED, 0A LISTEN, 08 CLOSE_WAIT; proc(5)).
func tcpSockets() map[string]string {
	m := make(map[string]string)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fl := strings.Fields(line)
			if len(fl) > 9 {
				m[fl[9]] = fl[1] + " -> " + fl[2] + ", state " + fl[3]
			}
		}
	}
	return m
}

func stacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:runtime.Stack(buf, true)]
}
