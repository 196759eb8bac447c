package benchrun

import (
	"fmt"
	"slices"
	"strings"
)

// The HTTP/2 targets, against net/http's HTTP/2 server (std-h2) on the
// same handler: on every h2load shape, requests per second at least
// h2RateGoal times its, at no more than h2CPUGoal times its server CPU
// per request; an idle connection at most h2IdleGoal times its memory.
const (
	h2RateGoal = 1.3
	h2CPUGoal  = 0.7
	h2IdleGoal = 0.1
)

// H2Targets checks the HTTP/2 targets for each of gale's HTTP/2 servers
// (rows with Gale, in order of first appearance) on every HTTP/2 case
// measured: two targets per h2-hello case (rate, CPU), one per h2-idle
// case.
func H2Targets(rows []Row) []Target {
	var ts []Target
	for _, g := range rows {
		if !g.Gale || g.Case.kind() != kindH2 {
			continue
		}
		ref, ok := findCaseRow(rows, g.Case, g.Case.Reference())
		if g.Case.Scenario == "h2-hello" {
			ts = append(ts, h2RateTarget(g, ref, ok), h2CPUTarget(g, ref, ok))
		} else {
			ts = append(ts, h2IdleTarget(g, ref, ok))
		}
	}
	return ts
}

// findCaseRow returns server srv's row of case c.
func findCaseRow(rows []Row, c Case, srv string) (Row, bool) {
	i := slices.IndexFunc(rows, func(r Row) bool { return r.Case == c && r.Server == srv })
	if i < 0 {
		return Row{}, false
	}
	return rows[i], true
}

// h2Shape names an h2-hello case's shape: "h2-hello: 1 conn × 100
// streams".
func h2Shape(c Case) string {
	return fmt.Sprintf("%s: %s × %s", c.Scenario, plural(c.Conns, "conn"), plural(c.Streams, "stream"))
}

// h2RateTarget: requests per second at least h2RateGoal × the
// reference's.
func h2RateTarget(g, ref Row, ok bool) Target {
	t := Target{Name: h2Shape(g.Case) + " (req/s)", Goal: fmt.Sprintf("≥ %.1f× %s", h2RateGoal, g.Case.Reference()), Server: g.Server}
	if !ok {
		t.Measured = "not measured: no " + g.Case.Reference() + " row"
		return t
	}
	t.Measured = fmt.Sprintf("%s req/s = %s", fmtRate(g.Median), versus(g.Median, ref))
	t.Met, t.Known = g.Median >= h2RateGoal*ref.Median, true
	return t
}

// h2CPUTarget: server CPU per request at most h2CPUGoal × the
// reference's.
func h2CPUTarget(g, ref Row, ok bool) Target {
	t := Target{Name: h2Shape(g.Case) + " (server CPU µs/req)", Goal: fmt.Sprintf("≤ %.1f× %s", h2CPUGoal, g.Case.Reference()), Server: g.Server}
	if !ok || ref.CPUPerMsg <= 0 || g.CPUPerMsg <= 0 {
		t.Measured = "not measured: no server CPU of both"
		return t
	}
	t.Measured = fmt.Sprintf("%s µs/req = %s× %s (%s)", fmtMicros(g.CPUPerMsg),
		ratio2(g.CPUPerMsg/ref.CPUPerMsg), ref.Server, fmtMicros(ref.CPUPerMsg))
	t.Met, t.Known = g.CPUPerMsg <= h2CPUGoal*ref.CPUPerMsg, true
	return t
}

// h2IdleTarget: server memory per idle connection at most h2IdleGoal ×
// the reference's.
func h2IdleTarget(g, ref Row, ok bool) Target {
	t := Target{Name: fmt.Sprintf("%s: %s (server RSS per conn)", g.Case.Scenario, plural(g.Case.Conns, "conn")),
		Goal: fmt.Sprintf("≤ 1/%.0f of %s", 1/h2IdleGoal, g.Case.Reference()), Server: g.Server}
	if !ok {
		t.Measured = "not measured: no " + g.Case.Reference() + " row"
		return t
	}
	unit := g.Case.Unit()
	t.Measured = fmt.Sprintf("%s %s = %s", fmtFigure(unit, g.Median), unit, versus(g.Median, ref))
	t.Met, t.Known = g.Median <= h2IdleGoal*ref.Median, true
	return t
}

// mdH2Targets writes the HTTP/2 targets table.
func mdH2Targets(b *strings.Builder, ts []Target) {
	b.WriteString("## HTTP/2 targets\n\n")
	if len(ts) == 0 {
		b.WriteString("No gale HTTP/2 server was measured.\n\n")
		return
	}
	fmt.Fprintf(b, "Against net/http's HTTP/2 server on the same handler: on every h2load shape, ≥ %.1f× its requests/s at ≤ %.1f× its server CPU per request; an idle connection ≤ 1/%.0f of its memory.\n\n",
		h2RateGoal, h2CPUGoal, 1/h2IdleGoal)
	mdTargetTable(b, ts)
}
