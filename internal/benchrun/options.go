package benchrun

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Options choose what Run measures and where it writes.
type Options struct {
	Duration time.Duration // of each measurement
	Reps     int           // repetitions, interleaved across servers
	Servers  []string      // names of the servers to compare
	Cases    []Case        // what to measure, in order
	// Pin runs each server on CPU 0 and the load generator on the
	// others, so they do not compete for a core.
	Pin bool
	// CPUProfile and MemProfile, if set, are paths for the gale servers'
	// profiles; the server and case are added to the file name.
	CPUProfile, MemProfile string
	// Syscalls counts each server's system calls during a measurement
	// (with perf stat; see syscallCounter).
	Syscalls bool
	// Out, if set, is a directory that receives results.jsonl, report.md
	// and the charts.
	Out      string
	Progress io.Writer // live progress line; nil for none
	Command  string    // the command line, for the report
}

// The suites. The short one is galebench's default (about a minute); the
// full one is what BASELINE.md measures, at several connection counts.
var (
	shortSuite = suite{scenarios: "stream,pingpong,conns", pingpong: "50x4", conns: "1000", idle: "10000", d: 2 * time.Second, reps: 3}
	fullSuite  = suite{scenarios: "stream,pingpong,conns,idle", pingpong: "50x4,1000x1024", conns: "1000,8192,19000", idle: "1000,10000,19000", d: 4 * time.Second, reps: 5}
)

type suite struct {
	scenarios, pingpong, conns, idle string
	d                                time.Duration
	reps                             int
}

// flagValues are the flags' raw values, turned into Options by finish.
type flagValues struct {
	servers, scenarios, pingpong, conns, idle *string
	full                                      *bool
}

// cli is the parsed command line: Options and the raw flags behind them.
type cli struct {
	o      Options
	fv     flagValues
	report bool // -report: only re-render from -out
}

// bindFlags defines the suite's flags on fs.
func bindFlags(fs *flag.FlagSet, cfg Config) *cli {
	c := &cli{}
	o := &c.o
	def := shortSuite
	if cfg.Full {
		def = fullSuite
	}
	c.fv = flagValues{
		servers:   fs.String("servers", strings.Join(cfg.Default, ","), "servers to compare, comma-separated: "+serverList(cfg.Servers)),
		scenarios: fs.String("scenarios", def.scenarios, "scenarios to run: stream, pingpong, conns, idle"),
		pingpong:  fs.String("pingpong", def.pingpong, "pingpong cases, CONNSxBYTES, comma-separated"),
		conns:     fs.String("conns", def.conns, "connection counts of the conns scenario (each echoes 1 KiB per round)"),
		idle:      fs.String("idle", def.idle, "connection counts of the idle scenario (at most about 19000: the open-file limit)"),
		full:      fs.Bool("full", false, "run the full suite: every scenario at every connection count, 5 reps of 4s"),
	}
	fs.DurationVar(&o.Duration, "d", def.d, "duration of each measurement")
	fs.IntVar(&o.Reps, "reps", def.reps, "repetitions, interleaved across servers; medians are reported")
	fs.BoolVar(&o.Pin, "pin", false, "pin each server to CPU 0 and the load generator to the other CPUs")
	fs.BoolVar(&o.Syscalls, "syscalls", false, "count each server's system calls per message (Linux; needs perf and the right to trace)")
	fs.StringVar(&o.Out, "out", "", "directory for results.jsonl, report.md and SVG charts (none if empty)")
	fs.BoolVar(&c.report, "report", false, "only re-render report.md and the charts from -out's results.jsonl")
	return c
}

// finish turns the flags into Options: -full first, then every flag set
// explicitly on top.
func (c *cli) finish(fs *flag.FlagSet) error {
	o, fv := &c.o, &c.fv
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *fv.full {
		full := fullSuite
		pick := func(name string, p *string, v string) {
			if !set[name] {
				*p = v
			}
		}
		pick("scenarios", fv.scenarios, full.scenarios)
		pick("pingpong", fv.pingpong, full.pingpong)
		pick("conns", fv.conns, full.conns)
		pick("idle", fv.idle, full.idle)
		if !set["d"] {
			o.Duration = full.d
		}
		if !set["reps"] {
			o.Reps = full.reps
		}
	}
	o.Servers = splitList(*fv.servers)
	cases, err := ParseCases(*fv.scenarios, *fv.pingpong, *fv.conns, *fv.idle)
	o.Cases = cases
	return err
}

// ParseCases expands scenario names into cases: pingpong once per
// CONNSxBYTES item, conns and idle once per connection count.
func ParseCases(scenarios, pingpong, conns, idle string) ([]Case, error) {
	var cases []Case
	for _, sc := range splitList(scenarios) {
		switch sc {
		case "stream":
			cases = append(cases, Case{Scenario: sc, Conns: 1, Size: streamChunk})
		case "pingpong":
			for _, item := range splitList(pingpong) {
				c, s, ok := strings.Cut(item, "x")
				n, err1 := strconv.Atoi(c)
				size, err2 := strconv.Atoi(s)
				if !ok || err1 != nil || err2 != nil || n < 1 || size < 1 {
					return nil, fmt.Errorf("bad pingpong case %q, want CONNSxBYTES such as 50x4", item)
				}
				cases = append(cases, Case{Scenario: sc, Conns: n, Size: size})
			}
		case "conns", "idle":
			list := conns
			size := connsSize
			if sc == "idle" {
				list, size = idle, 1
			}
			for _, item := range splitList(list) {
				n, err := strconv.Atoi(item)
				if err != nil || n < 1 {
					return nil, fmt.Errorf("bad %s connection count %q", sc, item)
				}
				cases = append(cases, Case{Scenario: sc, Conns: n, Size: size})
			}
		default:
			return nil, fmt.Errorf("unknown scenario %q (have stream, pingpong, conns, idle)", sc)
		}
	}
	if len(cases) == 0 {
		return nil, errNoCases
	}
	return cases, nil
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

func serverList(servers []Server) string {
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}
