package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// wsBenchOptions are ws-bench's flags.
type wsBenchOptions struct {
	mode       string
	libs       []string
	reps       int
	n          int
	conc       int
	dur        time.Duration
	payload    int
	client     string
	perClient  int
	serverCPU  string
	clientCPU  string
	settle     time.Duration
	out        string
	maxBusy    float64
	waitQuiet  time.Duration
	maxForeign float64
	retries    int
	profile    string
	backend    string
}

// wsRun is one run's record, a line of the results file.
type wsRun struct {
	Time       string  `json:"time"`
	Mode       string  `json:"mode"`
	Lib        string  `json:"lib"`
	Client     string  `json:"client"`
	Rep        int     `json:"rep"`
	Procs      int     `json:"server_procs"`
	Want       int     `json:"want_conns"`
	Conns      int     `json:"conns"`
	DialErrors int     `json:"dial_errors,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	DialSecs   float64 `json:"dial_secs,omitempty"`
	Before     wsMem   `json:"mem_before"`
	Loaded     wsMem   `json:"mem_loaded"`
	After      wsMem   `json:"mem_after_echo,omitzero"`
	// BytesPerConn is (Pss loaded - Pss before) / conns; RSSPerConn the
	// same with VmRSS.
	BytesPerConn float64 `json:"bytes_per_conn"`
	RSSPerConn   float64 `json:"rss_bytes_per_conn"`
	Threads      int     `json:"server_threads,omitempty"`
	// MemStats are the server's runtime figures once loaded (its Go heap
	// in use, goroutine stacks...), read after the memory.
	MemStats     map[string]float64 `json:"server_memstats,omitempty"`
	Conc         int                `json:"concurrency,omitempty"`
	Payload      int                `json:"payload,omitempty"`
	Msgs         int64              `json:"msgs,omitempty"`
	Bad          int64              `json:"bad,omitempty"`
	Lost         int64              `json:"lost,omitempty"`
	Secs         float64            `json:"secs,omitempty"`
	TPS          float64            `json:"tps,omitempty"`
	CPUSecs      float64            `json:"server_cpu_secs,omitempty"`
	CPUPct       float64            `json:"server_cpu_pct,omitempty"`
	CPUPerMsgUs  float64            `json:"server_cpu_us_per_msg,omitempty"`
	ClientCPUPct float64            `json:"client_cpu_pct,omitempty"`
	CPUs         string             `json:"cpus,omitempty"` // each CPU's busy share during the echo, softirq included
	EER          float64            `json:"eer,omitempty"`  // TPS / server CPU %
	P50us        float64            `json:"p50_us,omitempty"`
	P99us        float64            `json:"p99_us,omitempty"`
	MaxUs        float64            `json:"max_us,omitempty"`
	Busy         float64            `json:"machine_busy_before"`       // share of both CPUs busy before the run, from /proc/stat
	Foreign      float64            `json:"foreign_cpu_pct,omitempty"` // echo: CPU (% of one) used by neither interrupts, the server nor the clients
	Noisy        bool               `json:"noisy,omitempty"`           // the machine was busy: left out of the summary
	Err          string             `json:"err,omitempty"`
}

func wsBenchMain(args []string) error {
	fs := flag.NewFlagSet("ws-bench", flag.ExitOnError)
	var o wsBenchOptions
	fs.StringVar(&o.mode, "mode", "idle", "idle (memory per idle connection) or echo (BenchEcho: request/response of -payload bytes)")
	libs := fs.String("libs", strings.Join(wsDefaultNames(), ","), "servers, comma-separated (also: "+strings.Join(wsNames(), ", ")+")")
	fs.IntVar(&o.reps, "reps", 3, "repetitions; the libraries run interleaved, in a rotated order each time")
	fs.IntVar(&o.n, "n", 10000, "connections")
	fs.IntVar(&o.conc, "c", 1000, "echo: request/response loops in flight")
	fs.DurationVar(&o.dur, "d", 20*time.Second, "echo: duration")
	fs.IntVar(&o.payload, "payload", 1024, "message size, bytes")
	fs.StringVar(&o.client, "client", "gale", "load generator: gale or gorilla (see ws-load)")
	fs.IntVar(&o.perClient, "per-client", 19000, "connections per client process (each holds at most ~19,900 descriptors)")
	fs.StringVar(&o.serverCPU, "server-cpu", "0", "taskset CPU list of the server (\"\" for none)")
	fs.StringVar(&o.clientCPU, "client-cpu", "1", "taskset CPU list of the clients (\"\" for none)")
	fs.DurationVar(&o.settle, "settle", 2*time.Second, "wait before each memory reading")
	fs.StringVar(&o.out, "out", "", "directory to append the results (ws-MODE.jsonl) and write the summary (ws-MODE.md) to")
	fs.Float64Var(&o.maxBusy, "max-busy", 0.3, "wait before each run until the machine is less busy than this share of its CPUs")
	fs.Float64Var(&o.maxForeign, "max-foreign", 10, "echo: a run during which other programs used more than this percent of a CPU is noisy, and run again")
	fs.IntVar(&o.retries, "retries", 3, "how many times a noisy run is tried again, at the end")
	fs.DurationVar(&o.waitQuiet, "wait-quiet", 10*time.Minute, "wait at most this long for -max-busy, then run anyway (and record how busy)")
	fs.StringVar(&o.backend, "client-backend", "auto", "gale client: its engine's backend (auto, epoll, io_uring)")
	fs.StringVar(&o.profile, "profile", "", "directory to write CPU profiles of every server and client to")
	fs.Parse(args)
	o.libs = strings.Split(*libs, ",")
	for _, l := range o.libs {
		if _, err := findWsServer(l); err != nil {
			return err
		}
	}
	if o.mode != "idle" && o.mode != "echo" {
		return fmt.Errorf("-mode %q: idle or echo", o.mode)
	}
	var results io.Writer = io.Discard
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(o.out, "ws-"+o.mode+".jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		results = f
	}
	var runs []wsRun
	type todo struct {
		lib string
		rep int
	}
	var noisy []todo
	run := func(lib string, rep int) bool {
		busy := wsWaitQuiet(o.maxBusy, o.waitQuiet)
		r := wsBenchOne(&o, lib, rep)
		r.Busy = busy
		r.Noisy = o.maxBusy < 1 && (busy >= o.maxBusy || r.Mode == "echo" && r.Foreign > o.maxForeign)
		runs = append(runs, r)
		b, _ := json.Marshal(r)
		results.Write(append(b, '\n'))
		fmt.Fprintln(os.Stderr, wsRunLine(r))
		return !r.Noisy
	}
	for rep := range o.reps {
		order := slices.Clone(o.libs)
		k := rep % len(order)
		order = append(order[k:], order[:k]...)
		for _, lib := range order {
			if !run(lib, rep+1) {
				noisy = append(noisy, todo{lib, rep + 1})
			}
		}
	}
	// The noisy runs again, at the end, each until it is quiet.
	for _, t := range noisy {
		for range o.retries {
			if run(t.lib, t.rep) {
				break
			}
		}
	}
	sum := wsSummary(o.mode, runs)
	fmt.Print(sum)
	if o.out != "" {
		return os.WriteFile(filepath.Join(o.out, "ws-"+o.mode+".md"), []byte(sum), 0o644)
	}
	return nil
}

// wsBenchOne runs one library once: a server, its clients, the readings.
func wsBenchOne(o *wsBenchOptions, lib string, rep int) (r wsRun) {
	r = wsRun{Time: time.Now().UTC().Format(time.RFC3339), Mode: o.mode, Lib: lib, Client: o.client, Rep: rep, Procs: 1, Want: o.n}
	var children []*wsChild
	defer func() { stopAll(children) }()
	fail := func(err error) wsRun {
		r.Err = err.Error()
		return r
	}
	prof := func(side string) []string {
		if o.profile == "" {
			return nil
		}
		return []string{"-cpuprofile", filepath.Join(o.profile, fmt.Sprintf("%s-%s-%s-%d.pprof", o.mode, lib, side, rep))}
	}
	srv, err := startWsChild("server "+lib, o.serverCPU, append([]string{"ws-server", "-lib", lib, "-addr", "127.0.0.1:0"}, prof("server")...)...)
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
		return fail(fmt.Errorf("server said %q", l))
	}
	time.Sleep(o.settle)
	if r.Before, err = wsMemOf(srv.pid()); err != nil {
		return fail(err)
	}
	var clients []*wsChild
	for i, left := 0, o.n; left > 0; i++ {
		n := min(left, o.perClient)
		left -= n
		args := []string{"ws-load", "-client", o.client, "-url", "ws://" + addr + "/ws", "-n", strconv.Itoa(n),
			"-c", strconv.Itoa(max(1, o.conc*n/o.n)), "-d", o.dur.String(), "-payload", strconv.Itoa(o.payload), "-backend", o.backend}
		if i == 0 {
			args = append(args, prof("client")...)
		}
		if o.perClient < o.n {
			args = append(args, "-src", fmt.Sprintf("127.0.0.%d", 10+i))
		}
		cl, err := startWsChild(fmt.Sprintf("client %d", i), o.clientCPU, args...)
		if err != nil {
			return fail(err)
		}
		children = append(children, cl)
		clients = append(clients, cl)
	}
	for _, cl := range clients {
		var rep wsLoadReport
		if err := cl.report(5*time.Minute, &rep); err != nil {
			return fail(err)
		}
		r.Conns += rep.Conns
		r.DialErrors += rep.DialErrors
		r.DialSecs = max(r.DialSecs, rep.DialSecs)
		if r.FirstError == "" {
			r.FirstError = rep.FirstError
		}
	}
	if r.Conns == 0 {
		return fail(errors.New("no connection"))
	}
	time.Sleep(o.settle)
	if r.Loaded, err = wsMemOf(srv.pid()); err != nil {
		return fail(err)
	}
	r.Threads = wsThreads(srv.pid())
	if err := srv.say("memstats"); err == nil {
		srv.report(10*time.Second, &r.MemStats)
	}
	if o.profile != "" {
		if err := srv.say("heap " + filepath.Join(o.profile, fmt.Sprintf("%s-%s-heap-%d.pprof", o.mode, lib, rep))); err == nil {
			srv.line(30 * time.Second)
		}
	}
	r.BytesPerConn = float64(r.Loaded.Pss-r.Before.Pss) / float64(r.Conns)
	r.RSSPerConn = float64(r.Loaded.RSS-r.Before.RSS) / float64(r.Conns)
	if o.mode != "echo" {
		return r
	}
	r.Conc, r.Payload = o.conc, o.payload
	cpu0, err := wsCPUOf(srv.pid())
	if err != nil {
		return fail(err)
	}
	var cpids []int
	for _, cl := range clients {
		cpids = append(cpids, cl.pid())
	}
	ccpu0, _ := wsCPUOf(cpids...)
	stat0 := wsCPUStats()
	start := time.Now()
	for _, cl := range clients {
		if err := cl.say("echo"); err != nil {
			return fail(err)
		}
	}
	for _, cl := range clients {
		var rep wsLoadReport
		if err := cl.report(o.dur+time.Minute, &rep); err != nil {
			return fail(err)
		}
		r.Msgs += rep.Msgs
		r.Bad += rep.Bad
		r.Lost += rep.Lost
		r.Secs = max(r.Secs, rep.Secs)
		r.P50us, r.P99us, r.MaxUs = max(r.P50us, rep.P50us), max(r.P99us, rep.P99us), max(r.MaxUs, rep.MaxUs)
		if rep.FirstError != "" && r.FirstError == "" {
			r.FirstError = rep.FirstError
		}
	}
	wall := time.Since(start).Seconds()
	stat1 := wsCPUStats()
	r.CPUs = wsCPUShares(stat0, stat1)
	cpu1, err := wsCPUOf(srv.pid())
	if err != nil {
		return fail(err)
	}
	ccpu1, _ := wsCPUOf(cpids...)
	if r.After, err = wsMemOf(srv.pid()); err != nil {
		return fail(err)
	}
	r.CPUSecs = (cpu1 - cpu0).Seconds()
	r.CPUPct = 100 * r.CPUSecs / wall
	r.ClientCPUPct = 100 * (ccpu1 - ccpu0).Seconds() / wall
	r.Foreign = wsForeign(stat0, stat1, wall, r.CPUPct+r.ClientCPUPct)
	if r.Msgs > 0 && r.Secs > 0 {
		r.TPS = float64(r.Msgs) / r.Secs
		r.CPUPerMsgUs = r.CPUSecs * 1e6 / float64(r.Msgs)
		r.EER = r.TPS / r.CPUPct
	}
	return r
}

// wsRunLine is a run's progress line.
func wsRunLine(r wsRun) string {
	s := fmt.Sprintf("%s %-8s rep %d: %d/%d conns", r.Mode, r.Lib, r.Rep, r.Conns, r.Want)
	if r.Conns > 0 {
		s += fmt.Sprintf(", %.0f B/conn (Pss; RSS %.0f), server Pss %.1f MB (Go heap in use %.1f MB, stacks %.1f MB, %.0f goroutines), busy before %.0f%%",
			r.BytesPerConn, r.RSSPerConn, float64(r.Loaded.Pss)/1e6, r.MemStats["heap_inuse"]/1e6, r.MemStats["stack_inuse"]/1e6, r.MemStats["goroutines"], 100*r.Busy)
	}
	if r.Mode == "echo" && r.Msgs > 0 {
		s += fmt.Sprintf("; echo %.0f msg/s, %.2f µs CPU/msg, server CPU %.0f%%, client CPU %.0f%%, p50 %.0f µs, p99 %.0f µs, Pss after %.1f MB; %s",
			r.TPS, r.CPUPerMsgUs, r.CPUPct, r.ClientCPUPct, r.P50us, r.P99us, float64(r.After.Pss)/1e6, r.CPUs)
	}
	if r.Mode == "echo" && r.Msgs > 0 {
		s += fmt.Sprintf(", foreign %.0f%%", r.Foreign)
	}
	if r.Noisy {
		s += " (NOISY: left out)"
	}
	if r.Bad > 0 || r.Lost > 0 {
		s += fmt.Sprintf("; %d BAD, %d LOST", r.Bad, r.Lost)
	}
	if r.FirstError != "" {
		s += "; first error: " + r.FirstError
	}
	if r.Err != "" {
		s += "; FAILED: " + r.Err
	}
	return s
}
