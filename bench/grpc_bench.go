package main

// The gRPC benchmark (docs/bench/grpc.md): unary calls per second of
// grpc-go's client against grpc-go's server served by gale's httpd, by
// net/http and by grpc-go itself (grpc_server.go), with the server's CPU
// per call. Subcommands of this binary, apart from galebench's suite:
//
//	go run . grpc-bench [-servers gale,nethttp,grpc] [-reps 3] [-d 5s] [-c 32] [-conns 1]
//	go run . grpc-server -server gale       (a server child: "ready ADDR", until stdin ends)
//	go run . grpc-load -addr ADDR ...        (the client child)

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"
)

// grpcCommands are the gRPC subcommands, by name (see subcommand).
var grpcCommands = map[string]func(args []string) error{
	"grpc-server": grpcServerMain,
	"grpc-load":   grpcLoadMain,
	"grpc-bench":  grpcBenchMain,
}

// grpcServerMain is the grpc-server subcommand: one of grpcServers, h2c,
// on -addr. It prints "ready ADDR" once it listens, and stops when its
// standard input ends (the parent closed it, or died) or after -life.
func grpcServerMain(args []string) error {
	fs := flag.NewFlagSet("grpc-server", flag.ExitOnError)
	name := fs.String("server", "gale", "the server: "+strings.Join(grpcNames(), ", "))
	addr := fs.String("addr", "127.0.0.1:0", "listen address (loopback)")
	life := fs.Duration("life", 15*time.Minute, "stop after this long whatever happens")
	fs.Parse(args)
	s, err := findGRPCServer(*name)
	if err != nil {
		return err
	}
	if err := loopbackOnly(*addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	stop := s.start(ln, nil)
	fmt.Printf("ready %s\n", ln.Addr())
	ended := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(*life):
	}
	return stop()
}

func grpcNames() []string {
	var names []string
	for _, s := range grpcServers {
		names = append(names, s.name)
	}
	return names
}

// grpcBenchOptions are grpc-bench's flags.
type grpcBenchOptions struct {
	servers   []string
	reps      int
	load      grpcLoadOptions
	serverCPU string
	clientCPU string
	maxBusy   float64
	waitQuiet time.Duration
	out       string
}

// grpcRun is one run's record.
type grpcRun struct {
	Server string `json:"server"`
	Rep    int    `json:"rep"`
	conns  int    // asked for
	grpcLoadResult
	ServerCPUSecs float64 `json:"server_cpu_secs"`
	Busy          float64 `json:"machine_busy_before,omitempty"` // share of the CPUs busy just before the run (/proc/stat), when -max-busy asked
	Err           string  `json:"err,omitempty"`
}

func (r grpcRun) rate() float64 { return float64(r.Calls) / r.Secs }

// redials counts the connections dialed again after the server closed
// one; conns is what the run asked for.
func (r grpcRun) redials() int64 { return r.Dials - int64(r.conns) }

// serverUs and clientUs are the CPU microseconds per call.
func (r grpcRun) serverUs() float64 { return r.ServerCPUSecs * 1e6 / float64(r.Calls) }
func (r grpcRun) clientUs() float64 { return r.CPUSecs * 1e6 / float64(r.Calls) }

func grpcBenchMain(args []string) error {
	fs := flag.NewFlagSet("grpc-bench", flag.ExitOnError)
	var o grpcBenchOptions
	servers := fs.String("servers", strings.Join(grpcNames(), ","), "servers, comma-separated")
	fs.IntVar(&o.reps, "reps", 3, "repetitions; the servers run interleaved, in a rotated order each time")
	o.load.flags(fs)
	fs.StringVar(&o.serverCPU, "server-cpu", "0", "taskset CPU list of the server (\"\" for none)")
	fs.StringVar(&o.clientCPU, "client-cpu", "1", "taskset CPU list of the client (\"\" for none)")
	fs.Float64Var(&o.maxBusy, "max-busy", 0.3, "wait before each run until the machine is less busy than this share of its CPUs (1: do not wait)")
	fs.DurationVar(&o.waitQuiet, "wait-quiet", time.Minute, "wait at most this long for -max-busy, then run anyway (the run records how busy)")
	fs.StringVar(&o.out, "out", "", "a file to append each run's record to, as a JSON line")
	fs.Parse(args)
	o.servers = strings.Split(*servers, ",")
	runs, err := grpcBench(&o, os.Stderr)
	if err != nil {
		return err
	}
	fmt.Print(grpcSummary(runs))
	return nil
}

// grpcBench runs every server o.reps times, interleaved, and returns the
// runs; it writes a line per run to log, and the records to o.out.
func grpcBench(o *grpcBenchOptions, log io.Writer) ([]grpcRun, error) {
	for _, s := range o.servers {
		if _, err := findGRPCServer(s); err != nil {
			return nil, err
		}
	}
	results := io.Discard
	if o.out != "" {
		f, err := os.OpenFile(o.out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		results = f
	}
	var runs []grpcRun
	for rep := range o.reps {
		order := slices.Clone(o.servers)
		k := rep % len(order)
		for _, s := range append(order[k:], order[:k]...) {
			busy := wsWaitQuiet(o.maxBusy, o.waitQuiet)
			r := grpcBenchOne(o, s, rep+1)
			r.Busy = busy
			runs = append(runs, r)
			b, _ := json.Marshal(r)
			results.Write(append(b, '\n'))
			fmt.Fprintln(log, grpcRunLine(r))
		}
	}
	return runs, nil
}

// grpcBenchOne runs one server once: the server child, the load child,
// the server's CPU time over the load's measured window.
func grpcBenchOne(o *grpcBenchOptions, server string, rep int) (r grpcRun) {
	r = grpcRun{Server: server, Rep: rep, conns: max(o.load.conns, 1)}
	var children []*wsChild
	defer func() { stopAll(children) }()
	fail := func(err error) grpcRun {
		r.Err = err.Error()
		return r
	}
	srv, err := startWsChild("grpc-server "+server, o.serverCPU, "grpc-server", "-server", server)
	if err != nil {
		return fail(err)
	}
	children = append(children, srv)
	l, err := srv.line(30 * time.Second)
	if err != nil {
		return fail(err)
	}
	addr, ok := strings.CutPrefix(l, "ready ")
	if !ok {
		return fail(fmt.Errorf("%s said %q, want ready ADDR", srv.name, l))
	}
	lo := o.load
	lo.addr = addr
	load, err := startWsChild("grpc-load", o.clientCPU, append([]string{"grpc-load"}, lo.args()...)...)
	if err != nil {
		return fail(err)
	}
	children = append(children, load)
	var cpu [2]time.Duration
	for i, want := range []string{"start", "end"} {
		l, err := load.line(lo.warmup + lo.dur + 30*time.Second)
		if err != nil {
			return fail(err)
		}
		if l != want {
			return fail(fmt.Errorf("%s said %q, want %q", load.name, l, want))
		}
		if cpu[i], err = wsCPUOf(srv.pid()); err != nil {
			return fail(err)
		}
	}
	if err := load.report(30*time.Second, &r.grpcLoadResult); err != nil {
		return fail(err)
	}
	r.ServerCPUSecs = (cpu[1] - cpu[0]).Seconds()
	if r.Calls == 0 {
		return fail(fmt.Errorf("no call completed (%d failed: %s)", r.Errors, r.FirstError))
	}
	return r
}

// grpcRunLine is a run, on one line.
func grpcRunLine(r grpcRun) string {
	if r.Err != "" {
		return fmt.Sprintf("%-8s rep %d: failed: %s", r.Server, r.Rep, r.Err)
	}
	s := fmt.Sprintf("%-8s rep %d: %s calls/s, server CPU %.1f µs/call, client CPU %.1f µs/call, p50 %.0f µs, p99 %.0f µs",
		r.Server, r.Rep, wsNum(r.rate(), 0), r.serverUs(), r.clientUs(), r.P50us, r.P99us)
	if r.Busy > 0 {
		s += fmt.Sprintf(", machine %.0f%% busy before", 100*r.Busy)
	}
	if r.Errors > 0 {
		s += fmt.Sprintf(", %d failed calls (%s)", r.Errors, r.FirstError)
	}
	if r.redials() > 0 {
		s += fmt.Sprintf(", %d connections dialed again (the server closed them)", r.redials())
	}
	return s
}

// grpcSummary is the Markdown table of runs: per server, the median of
// its successful runs and, in brackets, their range.
func grpcSummary(runs []grpcRun) string {
	var servers []string
	by := map[string][]grpcRun{}
	var fails []string
	for _, r := range runs {
		if !slices.Contains(servers, r.Server) {
			servers = append(servers, r.Server)
		}
		switch {
		case r.Err != "":
			fails = append(fails, fmt.Sprintf("%s rep %d: %s", r.Server, r.Rep, r.Err))
		case r.Errors > 0:
			fails = append(fails, fmt.Sprintf("%s rep %d: %d failed calls (%s)", r.Server, r.Rep, r.Errors, r.FirstError))
		case r.redials() > 0:
			fails = append(fails, fmt.Sprintf("%s rep %d: %d connections dialed again: the server closed them", r.Server, r.Rep, r.redials()))
		default:
			by[r.Server] = append(by[r.Server], r)
		}
	}
	var b strings.Builder
	b.WriteString("| server | runs | calls/s ↑ | server CPU µs/call ↓ | client CPU µs/call | p50 µs | p99 µs |\n|---|---|---|---|---|---|---|\n")
	for _, s := range servers {
		rs := by[s]
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", s, len(rs),
			medianRange(rs, grpcRun.rate, 0), medianRange(rs, grpcRun.serverUs, 1), medianRange(rs, grpcRun.clientUs, 1),
			medianRange(rs, func(r grpcRun) float64 { return r.P50us }, 0),
			medianRange(rs, func(r grpcRun) float64 { return r.P99us }, 0))
	}
	if len(fails) > 0 {
		b.WriteString("\n")
	}
	for _, f := range fails {
		fmt.Fprintf(&b, "- failed: %s\n", f)
	}
	b.WriteString("\n")
	for _, name := range servers {
		if s, err := findGRPCServer(name); err == nil {
			fmt.Fprintf(&b, "- %s: %s\n", s.name, s.note)
		}
	}
	return b.String()
}

// medianRange is the median of v over rs and, when there are several, their
// range in brackets; "–" for none.
func medianRange[R any](rs []R, v func(R) float64, prec int) string {
	if len(rs) == 0 {
		return "–"
	}
	var xs []float64
	for _, r := range rs {
		xs = append(xs, v(r))
	}
	slices.Sort(xs)
	med := xs[len(xs)/2]
	if len(xs)%2 == 0 {
		med = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
	}
	s := wsNum(med, prec)
	if len(xs) > 1 {
		s += " (" + wsNum(xs[0], prec) + "–" + wsNum(xs[len(xs)-1], prec) + ")"
	}
	return s
}
