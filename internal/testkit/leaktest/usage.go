package leaktest

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// Usage is what the process holds: open descriptors, goroutines, and
// heap bytes in live objects after a collection.
type Usage struct {
	FDs, Goroutines int
	Heap            int64
}

// Measure collects garbage and takes the process's usage. It collects
// twice: the first collection moves sync.Pool contents to the victim
// cache, the second frees them.
func Measure() Usage {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fds, _ := OpenFDs()
	return Usage{FDs: len(fds), Goroutines: runtime.NumGoroutine(), Heap: int64(ms.HeapAlloc)}
}

// Settle waits, for up to Wait, until the usage is back within the
// tolerances of base: no more descriptors, at most GoroutineSlack more
// goroutines, at most heapSlack more heap bytes. It returns the last
// measure and whether it got there.
func Settle(base Usage, heapSlack int64) (Usage, bool) {
	deadline := time.Now().Add(Wait)
	for {
		u := Measure()
		ok := u.FDs <= base.FDs && u.Goroutines <= base.Goroutines+GoroutineSlack &&
			u.Heap <= base.Heap+heapSlack
		if ok || time.Now().After(deadline) {
			return u, ok
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// HeapNow returns the heap bytes in objects, live or not yet collected,
// without a collection: a cheap sample for peaks.
func HeapNow() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
