package netconn_test

import (
	"io"
	"testing"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestSteadyStateAllocs guards the hot path: a Write and a Read that
// waits for the loop's receive allocate nothing, on every backend.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage counters allocate")
	}
	backendtest.Run(t, func(t *testing.T) {
		backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
		c1, c2, stop, err := pipe(t, "tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		go func() {
			buf := make([]byte, 512)
			for {
				if _, err := io.ReadFull(c2, buf); err != nil {
					return
				}
				if _, err := c2.Write(buf); err != nil {
					return
				}
			}
		}()
		buf := make([]byte, 512)
		roundTrip := func() {
			if _, err := c1.Write(buf); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(c1, buf); err != nil {
				t.Fatal(err)
			}
		}
		for range 100 {
			roundTrip() // warm the pools and the loop's task queue
		}
		if a := testing.AllocsPerRun(500, roundTrip); a != 0 {
			t.Fatalf("%.2f allocations per Write+Read round trip, want 0", a)
		}
	})
}
