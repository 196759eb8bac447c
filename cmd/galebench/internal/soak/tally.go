package soak

import (
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Totals are one server's counts over the whole run.
type Totals struct {
	Kind   string `json:"kind"` // "totals"
	Server string `json:"server"`
	// Bytes: Sent were written by the client; Verified came back equal to
	// what was sent at that place in the stream; Corrupted came back
	// different (or beyond what was sent); Lost were sent on a connection
	// the client did not reset and never came back; Abandoned were sent
	// on a connection the client reset before their echo came, and are
	// not lost.
	Sent      int64 `json:"sent"`
	Verified  int64 `json:"verified"`
	Corrupted int64 `json:"corrupted"`
	Lost      int64 `json:"lost"`
	Abandoned int64 `json:"abandoned"`
	Messages  int64 `json:"messages"`
	// Connections: Opened were dialed; each ended as Closed, HalfClosed or
	// Reset, its plan's ending (one that met an unexpected error is closed).
	Opened     int64 `json:"opened"`
	Closed     int64 `json:"closed"`
	HalfClosed int64 `json:"half_closed"`
	Reset      int64 `json:"reset"`
	// Errors by kind (errKind): Expected are those a client's own reset
	// causes; Unexpected are every other, and fail the run.
	Expected   map[string]int64 `json:"expected_errors"`
	Unexpected map[string]int64 `json:"unexpected_errors"`
	// Corruptions describe the first corrupted connections.
	Corruptions []Corruption `json:"corruptions,omitempty"`
}

// UnexpectedErrors is the sum of the unexpected errors.
func (t Totals) UnexpectedErrors() int64 { return sum(t.Unexpected) }

// ExpectedErrors is the sum of the expected errors.
func (t Totals) ExpectedErrors() int64 { return sum(t.Expected) }

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// tally counts for one server as the workers go; safe from any goroutine.
type tally struct {
	sent, verified, corrupted, lost, abandoned, messages atomic.Int64
	opened, closed, halfClosed, reset                    atomic.Int64
	open                                                 atomic.Int64 // connections open now

	mu          sync.Mutex
	expected    map[string]int64
	unexpected  map[string]int64
	corruptions []Corruption
}

func newTally() *tally {
	return &tally{expected: map[string]int64{}, unexpected: map[string]int64{}}
}

// fail counts an unexpected error.
func (t *tally) fail(op string, err error) { t.count(t.unexpected, errKind(op, err)) }

// expect counts an error the client's own reset caused.
func (t *tally) expect(op string, err error) { t.count(t.expected, errKind(op, err)) }

func (t *tally) count(m map[string]int64, kind string) {
	t.mu.Lock()
	m[kind]++
	t.mu.Unlock()
}

// corruption records the description made by describe, for the first
// few corrupted connections.
func (t *tally) corruption(describe func() Corruption) {
	t.mu.Lock()
	full := len(t.corruptions) >= maxCorruptions
	t.mu.Unlock()
	if full {
		return
	}
	c := describe() // slow: a search through the stream, outside the lock
	t.mu.Lock()
	if len(t.corruptions) < maxCorruptions {
		t.corruptions = append(t.corruptions, c)
	}
	t.mu.Unlock()
}

// totals returns the counts so far.
func (t *tally) totals(server string) Totals {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Totals{
		Kind: "totals", Server: server,
		Sent: t.sent.Load(), Verified: t.verified.Load(), Corrupted: t.corrupted.Load(),
		Lost: t.lost.Load(), Abandoned: t.abandoned.Load(), Messages: t.messages.Load(),
		Opened: t.opened.Load(), Closed: t.closed.Load(), HalfClosed: t.halfClosed.Load(), Reset: t.reset.Load(),
		Expected: maps.Clone(t.expected), Unexpected: maps.Clone(t.unexpected),
		Corruptions: slices.Clone(t.corruptions),
	}
}
