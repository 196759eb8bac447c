package benchrun

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// WriteReport writes dir/report.md and the SVG charts it embeds into dir,
// creating dir if needed. It replaces only the files it writes, and the
// same meta and rows always give the same bytes.
func WriteReport(dir string, meta Meta, rows []Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	v := newReportView(meta, rows)
	charts := v.charts()
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(dir, c.file), c.svg, 0o644); err != nil {
			return err
		}
	}
	md := v.markdown(charts)
	if _, err := os.Stat(filepath.Join(dir, gapsFile)); err == nil {
		md = bytes.Replace(md, []byte("## Details\n"), []byte(gapsNote+"## Details\n"), 1)
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), md, 0o644)
}

// gapsFile, written by hand beside a report, explains the targets not
// met with their profiles; the report links it when it is there.
const (
	gapsFile = "gaps.md"
	gapsNote = "What stands in the way of the targets not met, with the profiles: [gaps.md](gaps.md).\n\n"
)

// reportView is the results arranged for rendering: servers in column
// order, cases in reading order, and each row found by case and server.
type reportView struct {
	meta    Meta
	servers []string
	gale    map[string]bool
	cases   []Case
	rows    map[reportCell]Row
}

// reportCell names one case on one server.
type reportCell struct {
	c   Case
	srv string
}

// newReportView arranges rows. Servers follow meta.Servers, then any
// server met only in rows; cases go stream, pingpong, conns, idle, each
// by connections and size.
func newReportView(meta Meta, rows []Row) *reportView {
	v := &reportView{meta: meta, gale: map[string]bool{}, rows: map[reportCell]Row{}}
	v.servers = slices.Clone(meta.Servers)
	for _, g := range meta.Gale {
		v.gale[g] = true
	}
	for _, r := range rows {
		if !slices.Contains(v.servers, r.Server) {
			v.servers = append(v.servers, r.Server)
		}
		if !slices.Contains(v.cases, r.Case) {
			v.cases = append(v.cases, r.Case)
		}
		v.gale[r.Server] = v.gale[r.Server] || r.Gale
		v.rows[reportCell{r.Case, r.Server}] = r
	}
	slices.SortStableFunc(v.cases, compareCases)
	return v
}

// compareCases orders cases for reading: by scenario, then connections,
// then size.
func compareCases(a, b Case) int {
	rank := func(s string) int {
		order := []string{"stream", "pingpong", "conns", "idle", "tls-stream", "tls-pingpong", "tls-handshake", "tls-idle",
			"http-hello", "http-64k", "http-upload", "http-idle", "h2-hello", "h2-idle"}
		i := slices.Index(order, s)
		if i < 0 {
			return len(order)
		}
		return i
	}
	return cmp.Or(cmp.Compare(rank(a.Scenario), rank(b.Scenario)),
		cmp.Compare(a.Scenario, b.Scenario), cmp.Compare(a.Conns, b.Conns), cmp.Compare(a.Size, b.Size), cmp.Compare(a.Streams, b.Streams))
}

// row returns the row of case c on server srv, if measured.
func (v *reportView) row(c Case, srv string) (Row, bool) {
	r, ok := v.rows[reportCell{c, srv}]
	return r, ok
}

// caseRows returns the rows of case c in server order.
func (v *reportView) caseRows(c Case) []Row {
	var rs []Row
	for _, s := range v.servers {
		if r, ok := v.row(c, s); ok {
			rs = append(rs, r)
		}
	}
	return rs
}

// markdown renders report.md; charts are the SVG files it embeds.
func (v *reportView) markdown(charts []chartFile) []byte {
	var b strings.Builder
	v.mdHeader(&b)
	v.mdHeadline(&b)
	mdCharts(&b, charts)
	if slices.ContainsFunc(v.cases, func(c Case) bool { return c.kind() == kindPlain }) {
		mdTargets(&b, Targets(v.sortedRows())) // the targets are the plain scenarios'
	}
	if slices.ContainsFunc(v.cases, func(c Case) bool { return c.kind() == kindH2 }) {
		mdH2Targets(&b, H2Targets(v.sortedRows()))
	}
	v.mdDetails(&b)
	v.mdNotes(&b)
	return []byte(b.String())
}

// sortedRows returns every row, by case and then server order.
func (v *reportView) sortedRows() []Row {
	var rs []Row
	for _, c := range v.cases {
		rs = append(rs, v.caseRows(c)...)
	}
	return rs
}

// mdHeader writes the title and how the figures were measured.
func (v *reportView) mdHeader(b *strings.Builder) {
	m := v.meta
	pinned := "no"
	if m.Pin {
		pinned = "yes (server on CPU 0, load generator on the others)"
	}
	b.WriteString("# galebench report\n\n")
	fmt.Fprintf(b, "- **Date:** %s UTC\n", m.Time.UTC().Format("2006-01-02 15:04"))
	fmt.Fprintf(b, "- **Machine:** %s, %d cores, %s, %s, GOMAXPROCS=%s\n",
		orDash(m.Machine), m.CPUs, orDash(m.Kernel), orDash(m.GoVersion), orDash(m.GOMAXPROCS))
	fmt.Fprintf(b, "- **Measurement:** %s per measurement, %d repetitions, pinned: %s\n", orDash(m.Duration), m.Reps, pinned)
	if m.Wine != "" {
		fmt.Fprintf(b, "- **Servers under Wine** (%s): Windows builds, each in its own Linux process; server CPU includes the wineserver's. Wine is not Windows: compare the servers with each other, not with figures of other runs\n", m.Wine)
	}
	fmt.Fprintf(b, "- **Command:**\n\n```\n%s\n```\n\n", m.Command)
	b.WriteString("Figures are medians of interleaved repetitions; min–max in brackets. ")
	b.WriteString("↑ means higher is better, ↓ lower is better. In the headline the best of each row is in bold, ")
	b.WriteString("and so is every figure whose min–max overlaps the best's: level with it, since identical runs ")
	b.WriteString("differ by as much. A figure alone in bold leads by more than the spread of its row's runs.\n\n")
}

// orDash returns s, or "-" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// headLine is one row of the headline table: one figure on every server.
type headLine struct {
	label  string
	lower  bool
	vals   map[string]float64 // by server; absent when not measured
	spread map[string]spread  // by server, where the repetitions' spread is known
	format func(float64) string
}

// spread is a figure's least and greatest over the repetitions.
type spread struct{ min, max float64 }

// overlaps reports whether s and o share a value.
func (s spread) overlaps(o spread) bool { return s.min <= o.max && o.min <= s.max }

// mdHeadline writes the scenario × server table.
func (v *reportView) mdHeadline(b *strings.Builder) {
	b.WriteString("## Headline\n\n| scenario |")
	for _, s := range v.servers {
		fmt.Fprintf(b, " %s |", mdCell(s))
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---:|", len(v.servers)))
	b.WriteString("\n")
	for _, l := range v.headLines() {
		b.WriteString(v.mdHeadLine(l))
	}
	b.WriteString("\n")
}

// mdHeadLine renders one headline row, the best figure in bold, with
// every figure level with it (levelWithBest).
func (v *reportView) mdHeadLine(l headLine) string {
	best, ok := bestServer(l.vals, l.lower)
	var b strings.Builder
	fmt.Fprintf(&b, "| %s |", mdCell(l.label))
	for _, s := range v.servers {
		x, has := l.vals[s]
		switch {
		case !has:
			b.WriteString(" - |")
		case ok && l.levelWithBest(s, best):
			fmt.Fprintf(&b, " **%s** |", l.format(x))
		default:
			fmt.Fprintf(&b, " %s |", l.format(x))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// levelWithBest reports whether server s's figure cannot be told from
// the best server's: it reads the same, or the repetitions' spreads of
// the two overlap.
func (l headLine) levelWithBest(s, best string) bool {
	if l.format(l.vals[s]) == l.format(l.vals[best]) {
		return true
	}
	a, ok1 := l.spread[s]
	b, ok2 := l.spread[best]
	return ok1 && ok2 && a.overlaps(b)
}

// bestServer returns the server with the best of vals, if there are at
// least two to compare (ties go to the first name, for a stable report).
func bestServer(vals map[string]float64, lower bool) (string, bool) {
	if len(vals) < 2 {
		return "", false
	}
	names := slices.Sorted(maps.Keys(vals))
	best := names[0]
	for _, s := range names[1:] {
		if x := vals[s]; lower && x < vals[best] || !lower && x > vals[best] {
			best = s
		}
	}
	return best, true
}

// headLines returns the headline rows: each case's figure, and for
// pingpong and conns the server CPU (and pingpong's p99) beneath it.
func (v *reportView) headLines() []headLine {
	var ls []headLine
	for _, c := range v.cases {
		unit, lower := c.Unit(), c.LowerIsBetter()
		median := func(r Row) (float64, bool) { return r.Median, true }
		format := func(x float64) string { return fmtFigure(unit, x) }
		main := v.headLine(c, c.Title()+", "+unit+" "+arrow(lower), lower, median, format)
		ls = append(ls, v.withSpread(main, c, func(r Row) (spread, bool) { return spread{r.Min, r.Max}, len(r.Values) > 1 }))
		ls = append(ls, v.extraLines(c)...)
	}
	return ls
}

// extraLines returns the CPU and latency rows under case c's headline;
// zero figures are not measured.
func (v *reportView) extraLines(c Case) []headLine {
	cpu := func(r Row) (float64, bool) { return r.CPUPerMsg, r.CPUPerMsg > 0 }
	p99 := func(r Row) (float64, bool) { return r.P99, r.P99 > 0 }
	sys := func(r Row) (float64, bool) { return r.SyscallsPerMsg, r.SyscallsPerMsg > 0 }
	sw := func(r Row) (float64, bool) { return r.CtxSwPerMsg, r.SyscallsPerMsg > 0 }
	var ls []headLine
	switch c.base() {
	case "pingpong":
		ls = append(ls, v.withSpread(v.headLine(c, "same, server CPU µs/msg ↓", true, cpu, fmtMicros), c, cpuSpread),
			v.headLine(c, "same, server system calls/msg ↓", true, sys, fmtPerMsg),
			v.headLine(c, "same, server context switches/msg ↓", true, sw, fmtPerMsg),
			v.headLine(c, "same, p99 latency µs ↓", true, p99, fmtLatency))
	case "conns":
		ls = append(ls, v.withSpread(v.headLine(c, "same, server CPU µs per echo ↓", true, cpu, fmtMicros), c, cpuSpread),
			v.headLine(c, "same, server system calls per echo ↓", true, sys, fmtPerMsg))
	case "stream":
		ls = append(ls, v.headLine(c, "same, server system calls per 64 KiB ↓", true, sys, fmtPerMsg))
	case "handshake":
		ls = append(ls, v.headLine(c, "same, server CPU µs/handshake ↓", true, cpu, fmtMicros),
			v.headLine(c, "same, p99 µs from dial to echo ↓", true, p99, fmtLatency))
	case "hello", "64k", "upload":
		ls = append(ls, v.headLine(c, "same, server CPU µs/req ↓", true, cpu, fmtMicros),
			v.headLine(c, "same, server system calls/req ↓", true, sys, fmtPerMsg),
			v.headLine(c, "same, p99 latency µs (wrk) ↓", true, p99, fmtLatency))
	}
	return slices.DeleteFunc(ls, func(l headLine) bool { return len(l.vals) == 0 })
}

// headLine collects one figure of case c from every server that
// measured it.
func (v *reportView) headLine(c Case, label string, lower bool, get func(Row) (float64, bool), format func(float64) string) headLine {
	l := headLine{label: label, lower: lower, vals: map[string]float64{}, spread: map[string]spread{}, format: format}
	for _, r := range v.caseRows(c) {
		if x, ok := get(r); ok {
			l.vals[r.Server] = x
		}
	}
	return l
}

// withSpread sets l's spreads from get, for the rows that have one.
func (v *reportView) withSpread(l headLine, c Case, get func(Row) (spread, bool)) headLine {
	for _, r := range v.caseRows(c) {
		if sp, ok := get(r); ok {
			l.spread[r.Server] = sp
		}
	}
	return l
}

// arrow says which way is better.
func arrow(lower bool) string {
	if lower {
		return "↓"
	}
	return "↑"
}

// mdCharts embeds the charts.
func mdCharts(b *strings.Builder, charts []chartFile) {
	if len(charts) == 0 {
		return
	}
	b.WriteString("## Charts\n\n")
	for _, c := range charts {
		name := strings.TrimSuffix(c.file, ".svg")
		fmt.Fprintf(b, "![%s](%s)\n\n", name, c.file)
	}
}

// mdTargets writes the design targets table.
func mdTargets(b *strings.Builder, ts []Target) {
	b.WriteString("## Design targets\n\n")
	if len(ts) == 0 {
		b.WriteString("No gale server was measured.\n\n")
		return
	}
	b.WriteString("Peers are the servers other than gale's and the references (stdnet, cepoll, curing).\n\n")
	mdTargetTable(b, ts)
}

// mdTargetTable writes a table of targets, one a row.
func mdTargetTable(b *strings.Builder, ts []Target) {
	b.WriteString("| target | server | goal | measured | met |\n|---|---|---|---|:-:|\n")
	for _, t := range ts {
		mark := "—"
		if t.Known {
			mark = "❌"
			if t.Met {
				mark = "✅"
			}
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", mdCell(t.Name), mdCell(t.Server), mdCell(t.Goal), mdCell(t.Measured), mark)
	}
	b.WriteString("\n")
}

// mdDetails writes one table per case with every figure of every server.
func (v *reportView) mdDetails(b *strings.Builder) {
	b.WriteString("## Details\n")
	for _, c := range v.cases {
		fmt.Fprintf(b, "\n### %s\n\n", c.Title())
		fmt.Fprintf(b, "| server | median %s | min–max | vs %s | server CPU µs/msg | client CPU µs/msg | server peak RSS MiB | p50 µs | p99 µs | p99.9 µs |\n", c.Unit(), c.Reference())
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range v.caseRows(c) {
			b.WriteString(detailLine(r))
		}
	}
	b.WriteString("\n")
}

// detailLine renders one row of a details table.
func detailLine(r Row) string {
	unit := r.Case.Unit()
	srvCPU, cliCPU := fmtMicros(r.CPUPerMsg), fmtMicros(r.ClientCPUPerMsg)
	if r.Case.base() == "idle" {
		srvCPU, cliCPU = "-", "-"
	}
	rss := "-"
	if r.PeakRSS > 0 {
		rss = strconv.FormatFloat(float64(r.PeakRSS)/(1<<20), 'f', 1, 64)
	}
	return fmt.Sprintf("| %s | %s | [%s–%s] | %s | %s | %s | %s | %s | %s | %s |\n",
		mdCell(r.Server), fmtFigure(unit, r.Median), fmtFigure(unit, r.Min), fmtFigure(unit, r.Max),
		fmtRatio(r.Ratio), srvCPU, cliCPU, rss, fmtLatency(r.P50), fmtLatency(r.P99), fmtLatency(r.P999))
}

// mdNotes lists how each server is written, in server order, with what
// a TLS server's handshakes chose.
func (v *reportView) mdNotes(b *strings.Builder) {
	var names []string
	for name := range v.meta.Notes {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		ia, ib := v.serverIndex(a), v.serverIndex(b)
		return cmp.Or(cmp.Compare(ia, ib), cmp.Compare(a, b))
	})
	if len(names) == 0 {
		return
	}
	b.WriteString("## Servers\n\n")
	chose := v.tlsChoices()
	for _, n := range names {
		fmt.Fprintf(b, "- `%s`: %s", n, v.meta.Notes[n])
		if c := chose[n]; c != "" {
			fmt.Fprintf(b, ". Its handshakes chose %s", c)
		}
		b.WriteString("\n")
	}
}

// tlsChoices returns what each TLS server's handshakes chose, by server.
func (v *reportView) tlsChoices() map[string]string {
	chose := map[string]string{}
	for _, r := range v.sortedRows() {
		chose[r.Server] = cmp.Or(chose[r.Server], r.TLS)
	}
	return chose
}

// serverIndex returns srv's column, or one past the last for a server
// with no column.
func (v *reportView) serverIndex(srv string) int {
	if i := slices.Index(v.servers, srv); i >= 0 {
		return i
	}
	return len(v.servers)
}

// mdCell escapes the pipes that would split a table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// fmtFigure formats a headline figure in unit: 131.6k msg/s (or req/s), 1,636 MB/s,
// 15.7 ms/round, 1,198 B/conn.
func fmtFigure(unit string, x float64) string {
	switch unit {
	case "msg/s", "req/s":
		return fmtRate(x)
	case "ms/round":
		return groupFloat(x, 1)
	}
	return groupFloat(x, 0)
}

// fmtRate formats a rate compactly: 9,870, 131.6k, 12.3M.
func fmtRate(x float64) string {
	switch a := math.Abs(x); {
	case a >= 1e7:
		return groupFloat(x/1e6, 1) + "M"
	case a >= 1e4:
		return groupFloat(x/1e3, 1) + "k"
	}
	return groupFloat(x, 0)
}

// fmtMicros formats a CPU time in µs with about three significant
// digits; "-" for zero, which means not measured.
func fmtMicros(x float64) string {
	switch a := math.Abs(x); {
	case a == 0:
		return "-"
	case a >= 100:
		return groupFloat(x, 0)
	case a >= 10:
		return groupFloat(x, 1)
	}
	return groupFloat(x, 2)
}

// fmtLatency formats a latency in µs; "-" for zero, not measured.
func fmtLatency(x float64) string {
	switch a := math.Abs(x); {
	case a == 0:
		return "-"
	case a < 10:
		return groupFloat(x, 1)
	}
	return groupFloat(x, 0)
}

// fmtRatio formats a ratio to std net as 1.07× or 7,963×; "-" for zero.
func fmtRatio(r float64) string {
	switch {
	case r == 0:
		return "-"
	case r >= 100:
		return groupFloat(r, 0) + "×"
	}
	return strconv.FormatFloat(r, 'f', 2, 64) + "×"
}

// groupFloat formats x with decimals places and thousands separators in
// its integer part: 1,234.5.
func groupFloat(x float64, decimals int) string {
	s := strconv.FormatFloat(x, 'f', decimals, 64)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	if strings.Trim(s, "0.") == "" {
		sign = "" // -0.0 reads as 0.0
	}
	intPart, frac, _ := strings.Cut(s, ".")
	for i := len(intPart) - 3; i > 0; i -= 3 {
		intPart = intPart[:i] + "," + intPart[i:]
	}
	if frac != "" {
		frac = "." + frac
	}
	return sign + intPart + frac
}

// fmtPerMsg formats a count per message, such as system calls.
func fmtPerMsg(x float64) string {
	if x == 0 {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// cpuSpread is a row's server CPU per message over its repetitions.
func cpuSpread(r Row) (spread, bool) {
	return spread{r.CPUMin, r.CPUMax}, len(r.Values) > 1 && r.CPUMax > 0
}
