package aio

import "github.com/galeio/gale/backend"

// LoopStats are one event loop's counters.
type LoopStats struct {
	// Backend is the kernel interface the loop runs on (after Auto and
	// GALE_BACKEND are resolved).
	Backend backend.Kind
	// Conns is the number of delegated connections on the loop.
	Conns int
	// PendingReads and PendingWrites count requests not yet completed.
	PendingReads, PendingWrites int
	// BytesRead and BytesWritten count bytes moved since the start.
	BytesRead, BytesWritten uint64
	// Completions counts requests completed since the start.
	Completions uint64
	// SwapBytes is the memory held by the loop's swap buffer.
	SwapBytes int
}

// Stats are a Watcher's counters, per loop.
type Stats struct {
	Loops []LoopStats
}

// Total sums the loops' counters.
func (s Stats) Total() LoopStats {
	var t LoopStats
	for _, l := range s.Loops {
		t.Backend = l.Backend // the same on every loop
		t.Conns += l.Conns
		t.PendingReads += l.PendingReads
		t.PendingWrites += l.PendingWrites
		t.BytesRead += l.BytesRead
		t.BytesWritten += l.BytesWritten
		t.Completions += l.Completions
		t.SwapBytes += l.SwapBytes
	}
	return t
}

// Stats returns a snapshot of the watcher's counters. Each counter is read
// atomically, the set as a whole is not. Safe from any goroutine.
func (w *watcher) Stats() Stats {
	s := Stats{Loops: make([]LoopStats, len(w.loops))}
	for i, lp := range w.loops {
		c := &lp.stats
		s.Loops[i] = LoopStats{
			Backend:       lp.l.Kind(),
			Conns:         lp.conns.Len(),
			PendingReads:  int(c.pendingReads.Load()),
			PendingWrites: int(c.pendingWrites.Load()),
			BytesRead:     c.bytesRead.Load(),
			BytesWritten:  c.bytesWritten.Load(),
			Completions:   c.completions.Load(),
			SwapBytes:     int(c.swapBytes.Load()),
		}
	}
	return s
}
