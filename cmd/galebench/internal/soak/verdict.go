package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Result is a soak's outcome: what soak.jsonl holds.
type Result struct {
	Meta    Meta
	Phases  []Phase
	Totals  []Totals // per server, in Meta.Servers' order
	Checks  []Check  // per server, then the client
	Samples []Sample
	// Failures say why the soak failed; none if it passed.
	Failures []string
}

// Pass reports whether the soak found nothing wrong.
func (r *Result) Pass() bool { return len(r.Failures) == 0 }

// failures lists what fails the soak in its totals and checks: a byte
// lost or corrupted, an unexpected error, a server that verified nothing,
// a process not back to its baseline.
func failures(r *Result) []string {
	var out []string
	for _, t := range r.Totals {
		if t.Lost > 0 {
			out = append(out, fmt.Sprintf("%s: %d bytes lost", t.Server, t.Lost))
		}
		if t.Corrupted > 0 {
			out = append(out, fmt.Sprintf("%s: %d bytes corrupted", t.Server, t.Corrupted))
		}
		if n := t.UnexpectedErrors(); n > 0 {
			out = append(out, fmt.Sprintf("%s: %d unexpected errors (%s)", t.Server, n, kinds(t.Unexpected)))
		}
		if t.Verified == 0 {
			out = append(out, fmt.Sprintf("%s: no byte was echoed and verified", t.Server))
		}
	}
	for _, c := range r.Checks {
		out = append(out, c.problems()...)
	}
	return out
}

// kinds lists error counts by kind: "read: ECONNRESET 3, write: EPIPE 1".
func kinds(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
