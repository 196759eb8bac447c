package soak

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/galeio/gale/internal/tools/benchrun"
)

// Main runs the soak command with args (those after "soak") against
// servers, printing progress on stderr and the summary on stdout, and
// returns the exit status: 0 if the soak passed, 1 if it failed or
// could not run, 2 for bad flags. command names it in messages, such as
// "galebench soak".
func Main(command string, servers []benchrun.Server, args []string) int {
	fs := flag.NewFlagSet(command, flag.ContinueOnError)
	o := defaults
	list := fs.String("servers", strings.Join(DefaultServers, ","), "servers to soak, all at once, comma-separated; by default those whose backend this machine lacks are skipped")
	fs.DurationVar(&o.Duration, "d", o.Duration, "duration of the load, warm-up included (a tenth, at most 10s)")
	fs.StringVar(&o.Out, "out", "", "directory for soak.jsonl, report.md and the SVG charts (none if empty)")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of every connection's plan; 0 takes one from the clock (printed)")
	fs.IntVar(&o.Conns, "conns", o.Conns, "client connections per server at a time")
	fs.DurationVar(&o.Every, "every", o.Every, "sampling interval of descriptors, goroutines and memory")
	fs.DurationVar(&o.Stall, "stall", o.Stall, "an echo or EOF owed for this long without progress is an error")
	fs.DurationVar(&o.Settle, "settle", o.Settle, "how long the end check waits for each process to return to its baseline")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s: every echoed byte verified under a random mix of clients; fails on loss, corruption, unexpected errors or leaks. Flags:\n", command)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return 2
	}
	fs.Visit(func(f *flag.Flag) { o.Explicit = o.Explicit || f.Name == "servers" })
	o.Servers = splitList(*list)
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	o.Command = strings.Join(append([]string{command}, args...), " ")
	o.Progress = os.Stderr
	fmt.Printf("%s: seed %d, %v\n", command, o.Seed, o.Duration)
	res, err := Run(servers, o)
	if res != nil {
		printSummary(os.Stdout, res)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", command, err)
		return 1
	}
	if o.Out != "" {
		fmt.Printf("soak.jsonl, report and charts in %s\n", o.Out)
	}
	if !res.Pass() {
		return 1
	}
	return 0
}

// printSummary writes the totals per server and the verdict.
func printSummary(w io.Writer, r *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tsent\tverified\tcorrupted\tlost\tabandoned\tconns\tresets\tunexpected errs\tfds base→end\tgoroutines base→end\t")
	for i, t := range r.Totals {
		var c Check
		if i < len(r.Checks) {
			c = r.Checks[i]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d→%d\t%d→%d\t\n", t.Server,
			fmtBytes(t.Sent), fmtBytes(t.Verified), fmtCount(t.Corrupted), fmtCount(t.Lost), fmtBytes(t.Abandoned),
			fmtCount(t.Opened), fmtCount(t.Reset), fmtCount(t.UnexpectedErrors()),
			c.Baseline.FDs, c.End.FDs, c.Baseline.Goroutines, c.End.Goroutines)
	}
	tw.Flush()
	if r.Pass() {
		fmt.Fprintf(w, "PASS (seed %d)\n", r.Meta.Seed)
		return
	}
	fmt.Fprintf(w, "FAIL (seed %d):\n", r.Meta.Seed)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
