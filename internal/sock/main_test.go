//go:build unix

package sock_test

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// TestMain fails the run if the tests leak goroutines or descriptors.
func TestMain(m *testing.M) {
	// The runtime's network poller opens descriptors of its own the first
	// time a pollable file is used: start it before counting.
	if ln, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		ln.Close()
	}
	fds, goroutines := countFDs(), runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		if err := settle(fds, goroutines); err != nil {
			fmt.Fprintln(os.Stderr, "leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func settle(fds, goroutines int) error {
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, g := countFDs(), runtime.NumGoroutine()
		if f <= fds && g <= goroutines {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d descriptors and %d goroutines, want at most %d and %d", f, g, fds, goroutines)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countFDs returns the number of open descriptors, or -1 where
// /proc/self/fd does not exist.
func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
