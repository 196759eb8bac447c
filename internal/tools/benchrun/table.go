package benchrun

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// printTable writes the rows as a text table: medians with min–max, the
// ratio to the reference (std net, std-tls for a TLS case, std-http for an
// HTTP one, std-h2 for an HTTP/2 one), server and client CPU per message, memory, latency.
func printTable(w io.Writer, meta Meta, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "case\tserver\tmedian\tunit\tmin–max\tvs ref\tsrv CPU µs/msg\tclient CPU µs/msg\tsrv peak RSS\tp50 µs\tp99 µs\tp99.9 µs\t")
	for _, r := range rows {
		ratio := "-"
		if r.Ratio > 0 && r.Server != r.Case.Reference() {
			ratio = fmt.Sprintf("%.2fx", r.Ratio)
		}
		cpu, ccpu := fmt.Sprintf("%.2f", r.CPUPerMsg), fmt.Sprintf("%.2f", r.ClientCPUPerMsg)
		if r.Case.base() == "idle" {
			cpu, ccpu = "-", "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			r.Case.Key(), r.Server, num(r.Median), r.Case.Unit(),
			num(slices.Min(r.Values))+"–"+num(slices.Max(r.Values)), ratio,
			cpu, ccpu, mib(r.PeakRSS), lat(r.P50), lat(r.P99), lat(r.P999))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d run(s) of %s per cell, servers interleaved, medians; 'vs ref' is the ratio to stdnet (std-tls for the tls- cases, std-http for the http- ones, std-h2 for the h2- ones), > 1 means better.\n", meta.Reps, meta.Duration)
	printTLS(w, rows)
	for _, ref := range caseReferences(rows) {
		if !slices.Contains(meta.Servers, ref) {
			fmt.Fprintf(w, "(add %s to -servers for ratios)\n", ref)
		}
	}
}

// printTLS writes what each TLS server's handshakes chose, once.
func printTLS(w io.Writer, rows []Row) {
	var done []string
	for _, r := range rows {
		if r.TLS != "" && !slices.Contains(done, r.Server) {
			fmt.Fprintf(w, "%s's handshakes chose %s\n", r.Server, r.TLS)
			done = append(done, r.Server)
		}
	}
}

// caseReferences returns the reference servers of the rows' cases.
func caseReferences(rows []Row) []string {
	var refs []string
	for _, r := range rows {
		if ref := r.Case.Reference(); !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func lat(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", us)
}
