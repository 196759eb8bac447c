package engine

// LoopStats are one loop's counters.
type LoopStats struct {
	// Backend is the kernel interface the loop runs on (after Auto and
	// GALE_BACKEND are resolved).
	Backend Backend
	// Conns is the number of open connections.
	Conns int
	// BytesIn and BytesOut count bytes read and written since the start.
	BytesIn, BytesOut uint64
	// Queued is the output queued on the loop's connections, in bytes.
	Queued int64
	// Paused counts connections whose reading is stopped by backpressure.
	Paused int
	// Timers is the number of scheduled timers (deadlines, idle timeouts).
	Timers int
	// AcceptErrors counts failed accepts.
	AcceptErrors uint64
}

// Stats are an engine's counters.
type Stats struct {
	Loops []LoopStats
	// Queued is the output queued across the engine, in bytes: the figure
	// Options.OutputBudget limits.
	Queued int64
}

// Total sums the loops' counters.
func (s Stats) Total() LoopStats {
	var t LoopStats
	for _, l := range s.Loops {
		t.Backend = l.Backend // the same on every loop
		t.Conns += l.Conns
		t.BytesIn += l.BytesIn
		t.BytesOut += l.BytesOut
		t.Queued += l.Queued
		t.Paused += l.Paused
		t.Timers += l.Timers
		t.AcceptErrors += l.AcceptErrors
	}
	return t
}

// Stats returns a snapshot of the counters. Each is read atomically; the
// set as a whole is not.
func (e *Engine) Stats() Stats {
	s := Stats{Loops: make([]LoopStats, len(e.loops)), Queued: e.queued.Load()}
	for i, lp := range e.loops {
		c := &lp.stats
		s.Loops[i] = LoopStats{
			Backend:      Backend(lp.l.Kind()),
			Conns:        int(lp.nconns.Load()),
			BytesIn:      c.bytesIn.Load(),
			BytesOut:     c.bytesOut.Load(),
			Queued:       c.queued.Load(),
			Paused:       int(c.paused.Load()),
			Timers:       int(c.timers.Load()),
			AcceptErrors: c.acceptErrors.Load(),
		}
	}
	return s
}
