package engine

import "testing"

// TestChunkClasses: a queue's first chunk is the smallest that holds the
// write, the next ones grow a class each, a write larger than every class
// takes the largest, and a returned chunk is reused for its own class.
func TestChunkClasses(t *testing.T) {
	var p chunkPool
	for _, c := range []struct {
		n     int
		min   uint8
		class uint8
	}{
		{1, 0, 0}, {1 << 10, 0, 0}, {1<<10 + 1, 0, 1}, {4 << 10, 0, 1},
		{5 << 10, 0, 2}, {1 << 20, 0, 2}, {1, 1, 1}, {1, 2, 2},
	} {
		ch := p.get(c.n, c.min)
		if ch.class != c.class || len(ch.buf) != chunkSizes[c.class] {
			t.Errorf("get(%d, %d) = class %d, %d bytes; want class %d, %d bytes",
				c.n, c.min, ch.class, len(ch.buf), c.class, chunkSizes[c.class])
		}
	}
	small := p.get(1, 0)
	small.w = 10
	p.put(small)
	if got := p.get(1, 0); got != small || got.w != 0 {
		t.Errorf("get after put = %p (w %d), want the returned chunk %p, reset", got, got.w, small)
	}
	if big := p.get(1, 2); big == small {
		t.Error("a 1 KiB chunk served a request for the 16 KiB class")
	}
	if got := nextClass(nil); got != 0 {
		t.Errorf("nextClass(nil) = %d, want 0", got)
	}
	for class, want := range []uint8{1, 2, 2} {
		if got := nextClass(&chunk{class: uint8(class)}); got != want {
			t.Errorf("nextClass after class %d = %d, want %d", class, got, want)
		}
	}
}

// TestChunkTrim: a trim lets go of the chunks that no get took since the
// previous trim, and keeps those a steady load uses.
func TestChunkTrim(t *testing.T) {
	var p chunkPool
	var chs []*chunk
	for range 10 {
		chs = append(chs, p.get(1, 0))
	}
	for _, ch := range chs {
		p.put(ch)
	}
	p.trim() // the burst just ended: its chunks were taken this interval
	if n := len(p.free[0]); n != 10 {
		t.Fatalf("after the first trim %d chunks are kept, want 10", n)
	}
	for range 5 { // a steady load of 3 at a time
		a, b, c := p.get(1, 0), p.get(1, 0), p.get(1, 0)
		p.put(a)
		p.put(b)
		p.put(c)
	}
	p.trim()
	if n := len(p.free[0]); n != 3 {
		t.Fatalf("after a trim under a load of 3, %d chunks are kept, want 3", n)
	}
	p.trim()
	if n := p.pooled(); n != 0 {
		t.Fatalf("after an interval without use the pool holds %d bytes, want 0", n)
	}
}
