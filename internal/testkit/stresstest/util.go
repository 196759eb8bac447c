package stresstest

import (
	"os"
	"testing"
	"time"
)

// long reports whether the long versions of the runs are asked for
// (GALE_LONG=1); by default they run at a size CI affords.
func long() bool { return os.Getenv("GALE_LONG") == "1" }

// WaitFor polls cond every millisecond until it holds, and fails t if it
// does not within timeout. It is for states no event announces (a
// server's counters). Call it from t's goroutine.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not reached within %v", what, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// mib converts bytes to MiB, for logs.
func mib(n int64) float64 { return float64(n) / (1 << 20) }
