package soak

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// WriteReport writes report.md and the charts into dir.
func WriteReport(dir string, r *Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range charts(r) {
		if err := os.WriteFile(filepath.Join(dir, c.file), c.svg, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(renderReport(r)), 0o644)
}

// renderReport is report.md: the run's settings, the verdict, the totals,
// the errors by kind, the processes' levels, and the charts.
func renderReport(r *Result) string {
	var b strings.Builder
	b.WriteString("# gale soak test\n\n")
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", r.Meta.Command)
	writeSettings(&b, r.Meta)
	writeVerdict(&b, r)
	writeTotals(&b, r.Totals)
	writeErrors(&b, r.Totals)
	writeCorruptions(&b, r.Totals)
	writeLevels(&b, r.Checks)
	b.WriteString("\n## Over time\n\n")
	b.WriteString("Samples every " + fmtSeconds(r.Meta.Every) + "; the dashed lines mark the phases. Raw samples, totals and checks: [soak.jsonl](soak.jsonl).\n\n")
	for _, c := range charts(r) {
		fmt.Fprintf(&b, "![%s](%s)\n\n", c.title, c.file)
	}
	return b.String()
}

func writeSettings(b *strings.Builder, m Meta) {
	load := m.Duration - m.Warmup
	rows := [][2]string{
		{"date", m.Time.Format(time.DateTime) + " UTC"},
		{"seed", fmt.Sprintf("%d (re-run the same plans with `-seed %d`)", m.Seed, m.Seed)},
		{"machine", fmt.Sprintf("%s, %d CPUs, %s, %s, GOMAXPROCS %d", m.Machine, m.CPUs, m.Kernel, m.GoVersion, m.GOMAXPROCS)},
		{"servers", fmt.Sprintf("%s: each a child process, all soaked at once, each for the whole %s (a %s warm-up, the idle baseline, %s of load)",
			strings.Join(m.Servers, ", "), fmtSeconds(m.Duration), fmtSeconds(m.Warmup), fmtSeconds(load))},
		{"clients", fmt.Sprintf("%d connections per server at a time, one worker each, from this process", m.Conns)},
		{"mix", mixText()},
		{"checks", fmt.Sprintf("every echoed byte against its connection's stream, in order; no progress for %s is a stall; at the end each process must return within %s to its idle baseline: descriptors +%d, goroutines +%d",
			fmtSeconds(m.Stall), fmtSeconds(m.Settle), m.Tolerance.FDs, m.Tolerance.Goroutines)},
	}
	for _, name := range slices.Sorted(maps.Keys(m.Skipped)) {
		rows = append(rows, [2]string{"skipped", name + ": " + m.Skipped[name]})
	}
	if m.Backend != "" {
		rows = append(rows, [2]string{"GALE_BACKEND", m.Backend + ": it overrode every server's backend"})
	}
	b.WriteString("| | |\n|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(b, "| %s | %s |\n", row[0], mdCell(row[1]))
	}
	b.WriteString("\n")
	for _, s := range m.Servers {
		if n := m.Notes[s]; n != "" {
			fmt.Fprintf(b, "- **%s**: %s\n", s, n)
		}
	}
}

// mixText describes the client behaviour plan.go draws.
func mixText() string {
	return fmt.Sprintf("per connection: 0 to %d messages (%.0f %% none: open and end at once), log-uniform; each 1 B to %s, log-uniform; "+
		"%.0f %% wait for their echo before the next, %.0f %% are followed by a pause of %s to %s, log-uniform; "+
		"the connection ends with a close after every echo (%.0f %%), a half-close read to EOF (%.0f %%), or a reset (SO_LINGER 0) at a random byte of its stream (%.0f %%)",
		maxMessages, pNoMessage*100, fmtBytes(maxMessage), pWait*100, pPause*100, minPause, maxPause,
		(1-pReset-pHalfClose)*100, pHalfClose*100, pReset*100)
}

func writeVerdict(b *strings.Builder, r *Result) {
	if r.Pass() {
		b.WriteString("\n**PASS**: no byte lost or corrupted, no unexpected error, and every process back to its idle descriptor and goroutine counts.\n")
		return
	}
	b.WriteString("\n**FAIL**:\n\n")
	for _, f := range r.Failures {
		fmt.Fprintf(b, "- %s\n", f)
	}
}

func writeTotals(b *strings.Builder, ts []Totals) {
	b.WriteString("\n## Bytes and connections\n\n")
	b.WriteString("Abandoned bytes were sent on a connection the client reset before their echo came: not lost.\n\n")
	b.WriteString("| server | bytes sent | verified | corrupted | lost | abandoned | messages | conns opened | closed | half-closed | reset | unexpected errors | expected errors |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range ts {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.Server,
			fmtCount(t.Sent), fmtCount(t.Verified), fmtCount(t.Corrupted), fmtCount(t.Lost), fmtCount(t.Abandoned),
			fmtCount(t.Messages), fmtCount(t.Opened), fmtCount(t.Closed), fmtCount(t.HalfClosed), fmtCount(t.Reset),
			fmtCount(t.UnexpectedErrors()), fmtCount(t.ExpectedErrors()))
	}
}

func writeErrors(b *strings.Builder, ts []Totals) {
	b.WriteString("\n## Errors by kind\n\n")
	b.WriteString("Expected errors are those the client's own resets cause (its reader sees its own close); every other error is unexpected and fails the soak.\n\n")
	b.WriteString("| server | kind | | count |\n|---|---|---|---:|\n")
	for _, t := range ts {
		rows := 0
		for _, e := range []struct {
			what string
			m    map[string]int64
		}{{"unexpected", t.Unexpected}, {"expected", t.Expected}} {
			for _, k := range slices.Sorted(maps.Keys(e.m)) {
				fmt.Fprintf(b, "| %s | %s | %s | %s |\n", t.Server, mdCell(k), e.what, fmtCount(e.m[k]))
				rows++
			}
		}
		if rows == 0 {
			fmt.Fprintf(b, "| %s | none | | 0 |\n", t.Server)
		}
	}
}

// writeCorruptions describes the first corrupted connections, if any.
func writeCorruptions(b *strings.Builder, ts []Totals) {
	var rows []string
	for _, t := range ts {
		for _, c := range t.Corruptions {
			from := "not found within ±4 MiB of the stream: another stream's bytes, or none"
			if c.Found {
				from = fmt.Sprintf("the stream's bytes at %+d", c.Shift)
			}
			rows = append(rows, fmt.Sprintf("| %s | %#x | %s | %s of %s | %s |", t.Server, c.Key,
				fmtCount(c.Offset), fmtCount(int64(c.Bad)), fmtCount(int64(c.Read)), from))
		}
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n## Corruptions\n\nThe first corrupted read of the first corrupted connections: where the first bad byte lies in the connection's stream, and where the bytes that came instead belong.\n\n")
	b.WriteString("| server | stream | first bad byte | bad bytes in the read | what came |\n|---|---|---:|---:|---|\n")
	b.WriteString(strings.Join(rows, "\n") + "\n")
}

func writeLevels(b *strings.Builder, cs []Check) {
	b.WriteString("\n## Descriptors, goroutines and memory\n\n")
	b.WriteString("Idle levels after the warm-up (baseline) and after the run once every client connection has closed (end), with the highest sampled during the run. Memory is shown, not judged.\n\n")
	b.WriteString("| process | descriptors: baseline → end (peak) | goroutines: baseline → end (peak) | RSS: baseline → end (peak) | flat |\n")
	b.WriteString("|---|---:|---:|---:|---|\n")
	for _, c := range cs {
		verdict := "yes"
		if !c.Flat {
			verdict = "**no**"
		}
		fmt.Fprintf(b, "| %s | %d → %d (%d) | %d → %d (%d) | %s → %s (%s) | %s |\n", c.Proc,
			c.Baseline.FDs, c.End.FDs, c.Peak.FDs, c.Baseline.Goroutines, c.End.Goroutines, c.Peak.Goroutines,
			fmtBytes(c.Baseline.RSS), fmtBytes(c.End.RSS), fmtBytes(c.Peak.RSS), verdict)
	}
}

// mdCell escapes a table cell's pipes.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
