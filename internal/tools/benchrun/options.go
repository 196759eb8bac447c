package benchrun

import (
	"flag"
	"fmt"
	"io"
	"slices"
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
	// Wine, if set, is a Windows build of this command: each server runs
	// as it under wine, in the prefix WINEPREFIX names, and its CPU adds
	// the prefix's wineserver's, which makes the system calls of Wine's
	// processes (see wine.go).
	Wine string
	// Out, if set, is a directory that receives results.jsonl, report.md
	// and the charts.
	Out      string
	Progress io.Writer // live progress line; nil for none
	Command  string    // the command line, for the report

	tls keyFiles // the TLS servers' certificate and key, set by Run
}

// The suites. The short one is galebench's default (about a minute); the
// full one is what BASELINE.md measures, at several connection counts.
// Neither runs the TLS, HTTP or HTTP/2 scenarios unless -scenarios names
// them.
var (
	shortSuite = suite{
		scenarios: "stream,pingpong,conns",
		lists: Lists{Pingpong: "50x4", Conns: "1000", Idle: "10000", TLSPingpong: "50x1024", Handshake: "16",
			HTTPHello: "50,1000", HTTPBulk: "50", HTTPIdle: "10000", H2Hello: h2Shapes, H2Idle: "10000"},
		d: 2 * time.Second, reps: 3,
	}
	fullSuite = suite{
		scenarios: "stream,pingpong,conns,idle",
		lists: Lists{Pingpong: "50x4,1000x1024", Conns: "1000,8192,19000", Idle: "1000,10000,19000",
			TLSPingpong: "50x1024", Handshake: "16", HTTPHello: "50,1000", HTTPBulk: "50", HTTPIdle: "10000",
			H2Hello: h2Shapes, H2Idle: "10000"},
		d: 4 * time.Second, reps: 5,
	}
)

type suite struct {
	scenarios string
	lists     Lists
	d         time.Duration
	reps      int
}

// h2Shapes are h2-hello's default cases, CONNSxSTREAMS: one connection
// multiplexing many streams, a few connections with some each, and many
// connections with one stream each.
const h2Shapes = "1x100,50x10,500x1"

// tlsScenarios are the TLS scenarios, for -scenarios tls.
const tlsScenarios = "tls-stream,tls-pingpong,tls-handshake,tls-idle"

// flagValues are the flags' raw values, turned into Options by finish.
type flagValues struct {
	servers, scenarios *string
	lists              Lists
	full               *bool
}

// cli is the parsed command line: Options and the raw flags behind them.
type cli struct {
	o      Options
	fv     flagValues
	report bool // -report: only re-render from -out
	// defaults are the servers compared without -servers: plain, TLS,
	// HTTP and HTTP/2.
	defaults, defaultsTLS, defaultsHTTP, defaultsH2 []string
}

// bindFlags defines the suite's flags on fs.
func bindFlags(fs *flag.FlagSet, cfg Config) *cli {
	c := &cli{defaults: cfg.Default, defaultsTLS: cfg.DefaultTLS, defaultsHTTP: cfg.DefaultHTTP, defaultsH2: cfg.DefaultH2}
	o := &c.o
	def := shortSuite
	if cfg.Full {
		def = fullSuite
	}
	fv := &c.fv
	fv.servers = fs.String("servers", "", fmt.Sprintf("servers to compare, comma-separated: %s (default %s; %s for the tls- scenarios; %s for the http- ones; %s for the h2- ones)",
		serverList(cfg.Servers), strings.Join(cfg.Default, ","), strings.Join(cfg.DefaultTLS, ","), strings.Join(cfg.DefaultHTTP, ","), strings.Join(cfg.DefaultH2, ",")))
	fv.scenarios = fs.String("scenarios", def.scenarios, "scenarios to run: stream, pingpong, conns, idle; tls-stream, tls-pingpong, tls-handshake, tls-idle (tls: all four), which run on the TLS servers alone; http-hello, http-64k, http-upload, http-idle (http: all four), which run on the HTTP servers alone, with wrk; h2-hello, h2-idle (h2: both), which run on the HTTP/2 servers alone, over h2c, with h2load")
	fs.StringVar(&fv.lists.Pingpong, "pingpong", def.lists.Pingpong, "pingpong cases, CONNSxBYTES, comma-separated")
	fs.StringVar(&fv.lists.Conns, "conns", def.lists.Conns, "connection counts of the conns scenario (each echoes 1 KiB per round)")
	fs.StringVar(&fv.lists.Idle, "idle", def.lists.Idle, "connection counts of the idle and tls-idle scenarios (at most about 19000: the open-file limit)")
	fs.StringVar(&fv.lists.TLSPingpong, "tls-pingpong", def.lists.TLSPingpong, "tls-pingpong cases, CONNSxBYTES, comma-separated")
	fs.StringVar(&fv.lists.Handshake, "tls-handshake", def.lists.Handshake, "concurrent clients of the tls-handshake scenario, comma-separated")
	fs.StringVar(&fv.lists.HTTPHello, "http-hello", def.lists.HTTPHello, "wrk's connections in the http-hello scenario, comma-separated")
	fs.StringVar(&fv.lists.HTTPBulk, "http-bulk", def.lists.HTTPBulk, "wrk's connections in the http-64k and http-upload scenarios, comma-separated")
	fs.StringVar(&fv.lists.HTTPIdle, "http-idle", def.lists.HTTPIdle, "connection counts of the http-idle scenario (at most about 19000: the open-file limit)")
	fs.StringVar(&fv.lists.H2Hello, "h2", def.lists.H2Hello, "h2-hello cases, CONNSxSTREAMS (h2load -c and -m), comma-separated")
	fs.StringVar(&fv.lists.H2Idle, "h2-idle", def.lists.H2Idle, "connection counts of the h2-idle scenario (at most about 19000: the open-file limit)")
	fv.full = fs.Bool("full", false, "run the full suite: every plain scenario at every connection count, 5 reps of 4s")
	fs.DurationVar(&o.Duration, "d", def.d, "duration of each measurement")
	fs.IntVar(&o.Reps, "reps", def.reps, "repetitions, interleaved across servers; medians are reported")
	fs.BoolVar(&o.Pin, "pin", false, "pin each server to CPU 0 and the load generator to the other CPUs")
	fs.BoolVar(&o.Syscalls, "syscalls", false, "count each server's system calls per message (Linux; needs perf and the right to trace)")
	fs.StringVar(&o.Wine, "wine", "", "run each server as `EXE`, a Windows build of this command, under wine (its CPU includes the prefix's wineserver's)")
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
		pick("pingpong", &fv.lists.Pingpong, full.lists.Pingpong)
		pick("conns", &fv.lists.Conns, full.lists.Conns)
		pick("idle", &fv.lists.Idle, full.lists.Idle)
		if !set["d"] {
			o.Duration = full.d
		}
		if !set["reps"] {
			o.Reps = full.reps
		}
	}
	cases, err := ParseCases(*fv.scenarios, fv.lists)
	o.Cases = cases
	o.Servers = splitList(*fv.servers)
	if !set["servers"] {
		o.Servers = c.defaultServers(cases)
	}
	return err
}

// defaultServers are the servers compared without -servers: the
// defaults of each kind (plain, TLS, HTTP, HTTP/2) that some case is of.
func (c *cli) defaultServers(cases []Case) []string {
	defaults := map[kind][]string{kindPlain: c.defaults, kindTLS: c.defaultsTLS, kindHTTP: c.defaultsHTTP, kindH2: c.defaultsH2}
	var out []string
	for _, k := range []kind{kindPlain, kindTLS, kindHTTP, kindH2} {
		if slices.ContainsFunc(cases, func(cs Case) bool { return cs.kind() == k }) {
			out = append(out, defaults[k]...)
		}
	}
	return out
}

// Lists are the comma-separated lists ParseCases expands each scenario
// with.
type Lists struct {
	Pingpong    string // pingpong's cases, CONNSxBYTES
	Conns       string // conns' connection counts
	Idle        string // idle's and tls-idle's connection counts
	TLSPingpong string // tls-pingpong's cases, CONNSxBYTES
	Handshake   string // tls-handshake's concurrent clients
	HTTPHello   string // http-hello's connections
	HTTPBulk    string // http-64k's and http-upload's connections
	HTTPIdle    string // http-idle's connection counts
	H2Hello     string // h2-hello's cases, CONNSxSTREAMS
	H2Idle      string // h2-idle's connection counts
}

// ParseCases expands scenario names into cases: stream and tls-stream
// once, pingpong and tls-pingpong once per CONNSxBYTES item of their
// lists, conns, idle, tls-idle, tls-handshake and the http- scenarios
// once per count of theirs, h2-hello once per CONNSxSTREAMS item. The
// name tls stands for the four TLS scenarios, http for the four HTTP
// ones, h2 for the two HTTP/2 ones.
func ParseCases(scenarios string, l Lists) ([]Case, error) {
	var cases []Case
	for _, sc := range splitList(scenarios) {
		names := []string{sc}
		switch sc {
		case "tls":
			names = splitList(tlsScenarios)
		case "http":
			names = splitList(httpScenarios)
		case "h2":
			names = splitList(h2Scenarios)
		}
		for _, name := range names {
			more, err := parseScenario(name, l)
			if err != nil {
				return nil, err
			}
			cases = append(cases, more...)
		}
	}
	if len(cases) == 0 {
		return nil, errNoCases
	}
	return cases, nil
}

// parseScenario expands one scenario name into its cases.
func parseScenario(sc string, l Lists) ([]Case, error) {
	switch sc {
	case "stream", "tls-stream":
		return []Case{{Scenario: sc, Conns: 1, Size: streamChunk}}, nil
	case "pingpong":
		return parsePingpong(sc, l.Pingpong)
	case "tls-pingpong":
		return parsePingpong(sc, l.TLSPingpong)
	case "conns":
		return parseCounts(sc, l.Conns, connsSize)
	case "idle", "tls-idle":
		return parseCounts(sc, l.Idle, 1)
	case "tls-handshake":
		return parseCounts(sc, l.Handshake, handshakeSize)
	}
	if cases, ok, err := parseHTTPScenario(sc, l); ok {
		return cases, err
	}
	if cases, ok, err := parseH2Scenario(sc, l); ok {
		return cases, err
	}
	return nil, fmt.Errorf("unknown scenario %q (have stream, pingpong, conns, idle, %s, or tls for those four, %s, or http for those four, %s, or h2 for those two)",
		sc, strings.ReplaceAll(tlsScenarios, ",", ", "), strings.ReplaceAll(httpScenarios, ",", ", "), strings.ReplaceAll(h2Scenarios, ",", ", "))
}

// parsePingpong makes a case of scenario sc per CONNSxBYTES item of list.
func parsePingpong(sc, list string) ([]Case, error) {
	var cases []Case
	for _, item := range splitList(list) {
		c, s, ok := strings.Cut(item, "x")
		n, err1 := strconv.Atoi(c)
		size, err2 := strconv.Atoi(s)
		if !ok || err1 != nil || err2 != nil || n < 1 || size < 1 {
			return nil, fmt.Errorf("bad %s case %q, want CONNSxBYTES such as 50x4", sc, item)
		}
		cases = append(cases, Case{Scenario: sc, Conns: n, Size: size})
	}
	return cases, nil
}

// parseCounts makes a case of scenario sc, with messages of size bytes,
// per connection count in list.
func parseCounts(sc, list string, size int) ([]Case, error) {
	var cases []Case
	for _, item := range splitList(list) {
		n, err := strconv.Atoi(item)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad %s connection count %q", sc, item)
		}
		cases = append(cases, Case{Scenario: sc, Conns: n, Size: size})
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
