package leaktest

import (
	"sync"
	"testing"
	"time"
)

// Peaks samples each of gauges every millisecond, on a goroutine of its
// own, until the returned function is called or t ends. That function
// stops the sampling, waits for the last sample, and returns each
// gauge's peak, in the order of gauges. HeapNow is the gauge of the heap.
//
// The gauges are called from the sampling goroutine only, never at once;
// the returned function may be called any number of times, from one
// goroutine at a time.
func Peaks(t testing.TB, gauges ...func() int64) func() []int64 {
	peaks := make([]int64, len(gauges))
	stop, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	end := func() {
		once.Do(func() { close(stop) })
		<-done
	}
	t.Cleanup(end)
	go func() {
		defer close(done)
		for {
			for i, g := range gauges {
				peaks[i] = max(peaks[i], g())
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() []int64 {
		end()
		return peaks
	}
}
