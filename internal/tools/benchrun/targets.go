package benchrun

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Target is one of DESIGN.md's performance targets checked for one of
// gale's servers.
type Target struct {
	Name     string // the scenario, such as "pingpong: 50 conns × 4 B (msg/s)"
	Goal     string // such as "≥ 1.1× the best peer"
	Server   string // the gale server checked
	Measured string // the figure and its ratios to the references
	Met      bool   // the figure meets the goal; meaningful only if Known
	Known    bool   // the rows the target needs were measured
}

// targetSpec is a target before it is checked: check returns the
// measured text and whether the goal was met, or ok false and what is
// missing.
type targetSpec struct {
	name, goal, key string
	check           func(g Row, rs []Row) (measured string, met, ok bool)
	applies         func(srv string) bool // nil: every gale server
}

// designTargets are DESIGN.md's performance targets that galebench
// measures. Peers are the servers that are neither gale's nor the
// references: stdnet and the C servers cepoll and curing.
var designTargets = []targetSpec{
	{"stream: 1 conn, 64 KiB writes (MB/s)", "≥ stdnet and ≥ 1.1× gaio", "stream", checkStream, nil},
	{"conns: 8,192 conns × 1 KiB (time)", "≤ 0.9× the fastest peer", "conns-8192", checkPeers(0.9), nil},
	{"pingpong: 50 conns × 4 B (msg/s)", "≥ 1.1× the best peer", "pingpong-50x4", checkPeers(1.1), nil},
	{"pingpong: 50 conns × 4 B (server CPU µs/msg)", "≤ cepoll (the C epoll reference)", "pingpong-50x4", checkCPU, nil},
	{"pingpong: 1,000 conns × 1 KiB (msg/s)", "≥ 1.1× the best peer", "pingpong-1000x1024", checkPeers(1.1), nil},
	{"idle: 19,000 conns (server RSS per conn)", "≤ 256 B/conn", "idle-19000", checkIdle, nil},
	{"io_uring: 50 conns × 4 B (server CPU µs/msg)", "≤ 0.8× the same server on epoll", "pingpong-50x4", checkURingCPU, onURing},
	{"io_uring: stream, 1 conn (MB/s)", "≥ the same server on epoll", "stream", checkURing(1), onURing},
	{"io_uring: conns, 8,192 × 1 KiB (time)", "≤ the same server on epoll", "conns-8192", checkURing(1), onURing},
}

// uringSuffix names the io_uring variant of a gale server.
const uringSuffix = "-io_uring"

func onURing(srv string) bool { return strings.HasSuffix(srv, uringSuffix) }

// checkURingCPU: server CPU per message at most 0.8× the epoll server's.
func checkURingCPU(g Row, rs []Row) (string, bool, bool) {
	ep, ok := findRow(rs, strings.TrimSuffix(g.Server, uringSuffix))
	if !ok || ep.CPUPerMsg <= 0 || g.CPUPerMsg <= 0 {
		return "no server CPU of the epoll server", false, false
	}
	s := fmt.Sprintf("%s µs/msg = %s× %s (%s)", fmtMicros(g.CPUPerMsg),
		ratio2(g.CPUPerMsg/ep.CPUPerMsg), ep.Server, fmtMicros(ep.CPUPerMsg))
	return s, g.CPUPerMsg <= 0.8*ep.CPUPerMsg, true
}

// checkURing returns a check that the median is no worse than factor
// times the epoll server's.
func checkURing(factor float64) func(g Row, rs []Row) (string, bool, bool) {
	return func(g Row, rs []Row) (string, bool, bool) {
		ep, ok := findRow(rs, strings.TrimSuffix(g.Server, uringSuffix))
		if !ok {
			return "no row of the epoll server", false, false
		}
		unit := g.Case.Unit()
		s := fmt.Sprintf("%s %s = %s", fmtFigure(unit, g.Median), unit, versus(g.Median, ep))
		if g.Case.LowerIsBetter() {
			return s, g.Median <= factor*ep.Median, true
		}
		return s, g.Median >= factor*ep.Median, true
	}
}

// Targets checks DESIGN.md's performance targets for each of gale's
// servers (rows with Gale, in order of first appearance): one Target per
// target and server, target by target. The targets are the plain
// scenarios': TLS and HTTP servers have none.
func Targets(rows []Row) []Target {
	var gale []string
	for _, r := range rows {
		if r.Gale && r.Case.kind() == kindPlain && !slices.Contains(gale, r.Server) {
			gale = append(gale, r.Server)
		}
	}
	var ts []Target
	for _, spec := range designTargets {
		for _, srv := range gale {
			if spec.applies != nil && !spec.applies(srv) {
				continue
			}
			ts = append(ts, spec.eval(srv, rows))
		}
	}
	return ts
}

// eval checks the target for server srv.
func (s targetSpec) eval(srv string, rows []Row) Target {
	t := Target{Name: s.name, Goal: s.goal, Server: srv, Measured: "not measured"}
	var rs []Row
	for _, r := range rows {
		if r.Case.Key() == s.key {
			rs = append(rs, r)
		}
	}
	g, ok := findRow(rs, srv)
	if !ok {
		t.Measured = "not measured: no " + s.key + " row"
		return t
	}
	measured, met, ok := s.check(g, rs)
	if !ok {
		t.Measured = "not measured: " + measured
		return t
	}
	t.Measured, t.Met, t.Known = measured, met, true
	return t
}

// findRow returns server srv's row among rs.
func findRow(rs []Row, srv string) (Row, bool) {
	i := slices.IndexFunc(rs, func(r Row) bool { return r.Server == srv })
	if i < 0 {
		return Row{}, false
	}
	return rs[i], true
}

// isPeer reports whether r is a peer's: neither gale's nor a reference.
func isPeer(r Row) bool { return !r.Gale && !references[r.Server] }

// references are the servers measured for scale rather than competition:
// std net, and the C epoll and io_uring servers of bench/.
var references = map[string]bool{"stdnet": true, "cepoll": true, "curing": true}

// checkStream: MB/s ≥ stdnet's and ≥ 1.1× gaio's.
func checkStream(g Row, rs []Row) (string, bool, bool) {
	std, ok1 := findRow(rs, "stdnet")
	gaio, ok2 := findRow(rs, "gaio")
	switch {
	case !ok1 && !ok2:
		return "no stdnet nor gaio row", false, false
	case !ok1:
		return "no stdnet row", false, false
	case !ok2:
		return "no gaio row", false, false
	}
	unit := g.Case.Unit()
	s := fmt.Sprintf("%s %s = %s, %s", fmtFigure(unit, g.Median), unit,
		versus(g.Median, std), versus(g.Median, gaio))
	return s, g.Median >= std.Median && g.Median >= 1.1*gaio.Median, true
}

// checkPeers returns a check that the median is at least factor times
// the best peer's, or for lower-is-better cases at most factor times.
func checkPeers(factor float64) func(g Row, rs []Row) (string, bool, bool) {
	return func(g Row, rs []Row) (string, bool, bool) {
		lower := g.Case.LowerIsBetter()
		best, ok := bestPeer(rs, lower)
		if !ok {
			return "no peer measured", false, false
		}
		unit := g.Case.Unit()
		s := fmt.Sprintf("%s %s = %s", fmtFigure(unit, g.Median), unit, versus(g.Median, best))
		if lower {
			return s, g.Median <= factor*best.Median, true
		}
		return s, g.Median >= factor*best.Median, true
	}
}

// bestPeer returns the peer row with the best median, the first on ties.
func bestPeer(rs []Row, lower bool) (Row, bool) {
	var best Row
	found := false
	for _, r := range rs {
		if !isPeer(r) {
			continue
		}
		if !found || (lower && r.Median < best.Median) || (!lower && r.Median > best.Median) {
			best, found = r, true
		}
	}
	return best, found
}

// checkCPU: server CPU µs/msg ≤ cepoll's.
func checkCPU(g Row, rs []Row) (string, bool, bool) {
	ref, ok := findRow(rs, "cepoll")
	if !ok || ref.CPUPerMsg <= 0 || g.CPUPerMsg <= 0 {
		return "no server CPU of cepoll", false, false
	}
	s := fmt.Sprintf("%s µs/msg = %s× cepoll (%s)", fmtMicros(g.CPUPerMsg),
		ratio2(g.CPUPerMsg/ref.CPUPerMsg), fmtMicros(ref.CPUPerMsg))
	return s, g.CPUPerMsg <= ref.CPUPerMsg, true
}

// checkIdle: at most 256 bytes of server memory per idle connection.
func checkIdle(g Row, _ []Row) (string, bool, bool) {
	unit := g.Case.Unit()
	return fmtFigure(unit, g.Median) + " " + unit, g.Median <= 256, true
}

// versus formats x against reference row ref: "0.92× stdnet (1,636)".
func versus(x float64, ref Row) string {
	s := fmt.Sprintf("%s (%s)", ref.Server, fmtFigure(ref.Case.Unit(), ref.Median))
	if ref.Median == 0 {
		return s
	}
	return ratio2(x/ref.Median) + "× " + s
}

// ratio2 formats a ratio with two decimals.
func ratio2(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) }
