//go:build !race

package websocket

import (
	"compress/flate"
	"runtime"
	"testing"
)

// TestPmdAllocs checks that compressing and decompressing a 1 KiB message
// allocates nothing in steady state, given a dst with enough capacity:
// the flate state is pooled, and the window reused.
func TestPmdAllocs(t *testing.T) {
	msg := msgText[:1024]
	dst := make([]byte, 0, 4096)
	for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.HuffmanOnly} {
		for _, bits := range []uint8{9, 15} {
			if n := testing.AllocsPerRun(100, func() { compress(dst[:0], msg, level, bits) }); n != 0 {
				t.Errorf("compress(1 KiB, %d, %d) = %v allocations per call, want 0", level, bits, n)
			}
		}
	}
	wire := compress(nil, msg, flate.BestSpeed, 15)
	st := zeroState
	if n := testing.AllocsPerRun(100, func() { st.inflate(dst[:0], wire, 1<<20) }); n != 0 {
		t.Errorf("inflate(1 KiB) = %v allocations per call, want 0", n)
	}
	takeover := pmdState{on: true, outBits: 15, inTakeover: true, win: newWindow(15)}
	for range 40 { // fill the window: it then stops growing
		takeover.inflate(dst[:0], wire, 1<<20)
	}
	if n := testing.AllocsPerRun(100, func() { takeover.inflate(dst[:0], wire, 1<<20) }); n != 0 {
		t.Errorf("inflate(1 KiB) with takeover = %v allocations per call, want 0", n)
	}
}

// TestPmdMemory reports what the pooled flate state and a window cost
// (run with -v to see): the reason none of them is kept per connection
// except the window.
func TestPmdMemory(t *testing.T) {
	measure := func(f func() any) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep := f()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(keep)
		return after.TotalAlloc - before.TotalAlloc
	}
	for _, level := range []int{flate.HuffmanOnly, flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
		n := measure(func() any { w, _ := flate.NewWriter(nil, level); return w })
		t.Logf("flate.NewWriter(level %d): %d bytes", level, n)
	}
	t.Logf("flate.NewReader: %d bytes", measure(func() any { return flate.NewReader(nil) }))
	t.Logf("pooled decompressor: %d bytes", measure(func() any {
		d := new(decompressor)
		d.fr = flate.NewReader(&d.in)
		return d
	}))
	t.Logf("pooled compressor (level %d): %d bytes", flate.BestSpeed, measure(func() any {
		return getCompressor(flate.BestSpeed) // not given back: a new one unless the pool had one
	}))
	for _, bits := range []uint8{9, 15} {
		full := make([]byte, 1<<bits)
		t.Logf("window(%d), full: %d bytes", bits, measure(func() any { w := newWindow(bits); w.add(full); return w }))
	}
}
