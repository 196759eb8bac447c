package engine

import (
	"errors"

	"github.com/galeio/gale/backend"
)

// LoopStats are one loop's counters.
type LoopStats struct {
	// Backend is the kernel interface the loop runs on (after Auto and
	// GALE_BACKEND are resolved).
	Backend backend.Kind
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
	// Limits counts the connections closed by a limit, by limit.
	Limits LimitStats
	// Accepted counts the connections that arrived since the start:
	// accepted by a listener or given by Adopt, refused ones included.
	Accepted uint64
	// Refused counts the connections refused as they arrived, by cap.
	Refused RefusedStats

	// Handshakes is the number of TLS handshakes in progress: begun on
	// the loop (the connection attached) and not yet ended.
	Handshakes int
	// Deadlines counts the read and write deadlines that passed.
	Deadlines DeadlineStats
	// Errors counts the connections closed by a failure, by kind.
	Errors ErrorStats
}

// LimitStats count the connections each limit closed; OnClose got the
// error named.
type LimitStats struct {
	InputBufferFull  uint64 // ErrInputBufferFull: Options.MaxInputBuffer
	WriteBufferFull  uint64 // ErrWriteBufferFull: Options.MaxWriteBuffer
	IdleTimeout      uint64 // ErrIdleTimeout: Options.IdleTimeout, ReadIdleTimeout
	HandshakeTimeout uint64 // ErrHandshakeTimeout: Options.HandshakeTimeout
	ProxyHeader      uint64 // ErrProxyHeader: a bad, late or missing PROXY header
}

func (l *LimitStats) add(o LimitStats) {
	l.InputBufferFull += o.InputBufferFull
	l.WriteBufferFull += o.WriteBufferFull
	l.IdleTimeout += o.IdleTimeout
	l.HandshakeTimeout += o.HandshakeTimeout
	l.ProxyHeader += o.ProxyHeader
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
		t.Limits.add(l.Limits)
		t.Accepted += l.Accepted
		t.Refused.add(l.Refused)
		t.addEvents(l)
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
			Backend:      lp.l.Kind(),
			Conns:        int(lp.nconns.Load()),
			BytesIn:      c.bytesIn.Load(),
			BytesOut:     c.bytesOut.Load(),
			Queued:       c.queued.Load(),
			Paused:       int(c.paused.Load()),
			Timers:       int(c.timers.Load()),
			AcceptErrors: c.acceptErrors.Load(),
			Limits: LimitStats{
				InputBufferFull:  c.limits[limitInput].Load(),
				WriteBufferFull:  c.limits[limitWrite].Load(),
				IdleTimeout:      c.limits[limitIdle].Load(),
				HandshakeTimeout: c.limits[limitHandshake].Load(),
				ProxyHeader:      c.limits[limitProxy].Load(),
			},
			Accepted: c.accepted.Load(),
			Refused: RefusedStats{
				MaxConns:      c.refused[refusedTotal].Load(),
				MaxConnsPerIP: c.refused[refusedPerIP].Load(),
			},
		}
		c.ev.load(&s.Loops[i])
	}
	return s
}

// The limits LimitStats counts, as loopCounters.limits' indexes.
const (
	limitInput = iota
	limitWrite
	limitIdle
	limitHandshake
	limitProxy
	numLimits
)

// countClose counts a connection closed with err, if a limit closed it.
func (lp *eloop) countClose(err error) {
	i := -1
	switch {
	case err == nil:
	case errors.Is(err, ErrInputBufferFull):
		i = limitInput
	case errors.Is(err, ErrWriteBufferFull):
		i = limitWrite
	case errors.Is(err, ErrIdleTimeout):
		i = limitIdle
	case errors.Is(err, ErrHandshakeTimeout):
		i = limitHandshake
	case errors.Is(err, ErrProxyHeader):
		i = limitProxy
	default:
		lp.stats.ev.countError(err)
	}
	if i >= 0 {
		lp.stats.limits[i].Add(1)
	}
}
