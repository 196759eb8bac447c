package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/galeio/gale/internal/tools/procfs"
)

// wsScaleRun is a scale run's record.
type wsScaleRun struct {
	Time   string `json:"time"`
	Lib    string `json:"lib"`
	Client string `json:"client"`
	Layout string `json:"layout"`
	Procs  int    `json:"server_procs"`
	// MemLimit is the servers' GOMEMLIMIT, when set (-gomemlimit): not
	// the runtime's default, so labelled wherever the figure is quoted.
	MemLimit string `json:"server_gomemlimit,omitempty"`
	// KeepAlive is both ends' TCP keep-alive period when set
	// (-keepalive; negative: off), else package net's 15 s.
	KeepAlive string `json:"tcp_keepalive,omitempty"`
	Clients   int    `json:"client_procs"`
	Want      int    `json:"want_conns"`
	Conns     int    `json:"conns"`
	PerProc   []int  `json:"conns_per_server_proc"`
	// Lean: the servers ran cmd/ws-server-LIB, a binary linking that
	// library alone (-lean), not the bench binary.
	Lean bool `json:"server_binary_lean,omitempty"`
	// IdleDeadline is the servers' -idle-deadline (see wsserve), set with
	// -idle so that a library whose default read deadline would close
	// idle connections (nbio's 120 s) holds them through the reading.
	IdleDeadline string `json:"server_idle_deadline,omitempty"`
	// Srcs: each client dialed from its own 127.0.0.x (-client-srcs).
	Srcs bool `json:"client_srcs,omitempty"`
	// Held is what the servers held when their memory was read (the sum
	// of PerProc): a run whose servers lost connections since the
	// clients counted them fails.
	Held int `json:"conns_held,omitempty"`
	// PssBefore and PssLoaded are each server's Pss before and once loaded, in bytes.
	PssBefore  []int64 `json:"pss_before_per_server_proc,omitempty"`
	PssLoaded  []int64 `json:"pss_loaded_per_server_proc,omitempty"`
	DialErrors int     `json:"dial_errors,omitempty"`
	FirstError string  `json:"first_error,omitempty"`
	DialSecs   float64 `json:"dial_secs"`
	Before     wsMem   `json:"mem_before"`
	Loaded     wsMem   `json:"mem_loaded"`
	ClientMem  wsMem   `json:"client_mem_loaded"`
	// MemStats are the servers' runtime figures once loaded, summed
	// (goroutines and num_gc too).
	MemStats map[string]float64 `json:"server_memstats,omitempty"`
	// PerConn is the growth: (Pss loaded - Pss before) / conns; Total the
	// whole: Pss loaded / conns.
	PerConn   float64 `json:"bytes_per_conn_growth"`
	Total     float64 `json:"bytes_per_conn_total"`
	Base1     float64 `json:"one_process_base_bytes"`
	Proj1MLin float64 `json:"projected_1m_total_bytes"`  // Total × 10^6
	Proj1MOne float64 `json:"projected_1m_growth_bytes"` // Base1 + PerConn × 10^6
	// Idle is the second reading, -idle after the first: the servers'
	// memory once the runtime's periodic collections (one every two
	// minutes without other cause) and its scavenger have given back
	// the headroom the connections' arrival grew. Nil without -idle.
	Idle *wsScaleIdle `json:"idle,omitempty"`
	Echo *wsRun       `json:"echo,omitempty"`
	Busy float64      `json:"machine_busy_before"`
	Err  string       `json:"err,omitempty"`
}

func wsScaleMain(args []string) error {
	fs := flag.NewFlagSet("ws-scale", flag.ExitOnError)
	lib := fs.String("lib", "gale", "server library")
	conns := fs.Int("conns", 100000, "connections in all")
	procs := fs.Int("procs", 6, "server processes (each holds at most ~19,900 descriptors)")
	clients := fs.Int("clients", 6, "client processes")
	client := fs.String("client", "gale", "load generator: gale or gorilla")
	layout := fs.String("layout", "", "ports: each server process on its own port, every client dialing all of them from 127.0.0.1; reuseport: all on one port with SO_REUSEPORT, each client from its own 127.0.0.x (needs a client that binds a source address: gorilla). Default: reuseport for gorilla, ports for gale")
	serverCPU := fs.String("server-cpu", "0", "taskset CPU list of the servers")
	clientCPU := fs.String("client-cpu", "1", "taskset CPU list of the clients")
	dialers := fs.Int("dialers", 64, "dials in flight per client process")
	hold := fs.Duration("hold", 5*time.Second, "hold the connections this long before reading the memory")
	echo := fs.Duration("echo", 0, "then run the echo load for this long (0: none)")
	conc := fs.Int("c", 1000, "echo loops in flight, in all")
	payload := fs.Int("payload", 1024, "echo message size")
	out := fs.String("out", "", "directory to append the record (ws-scale.jsonl) to")
	heapDir := fs.String("heap", "", "once the memory is read, write each server's heap profile (server-N.pprof) to this directory")
	rate := fs.Int("memprofilerate", 0, "the servers' runtime.MemProfileRate (1: every allocation, for -heap; it costs memory: not for the record)")
	memLimit := fs.String("gomemlimit", "", "the servers' GOMEMLIMIT (e.g. 12MiB), a labelled configuration; default: none, as every library runs")
	wait := fs.Duration("wait", 10*time.Minute, "wait at most this long for the machine to be quiet (under 30% busy) before starting")
	srcs := fs.Bool("client-srcs", false, "ports layout: each client dials from its own 127.0.0.x (past ~500,000 connections from one address, the kernel's search for a free port makes each connect slow)")
	dialWait := fs.Duration("dial-wait", 10*time.Minute, "wait at most this long for each client to report its connections made")
	lean := fs.Bool("lean", false, "run the servers from cmd/ws-server-LIB (gale, nbio), built here with the go command: a binary that links that library alone, as a deployment's would, instead of the bench binary, which links every peer library (about 1.2 MB more of each idle process's memory). Run from the bench directory")
	idle := fs.Duration("idle", 0, "after the first reading, hold the idle connections this long more and read the memory again (0: no second reading). The runtime collects every two minutes when nothing else starts a cycle, and its scavenger then returns what the arrival's garbage grew: 5m sees two such cycles")
	keepAlive := fs.Duration("keepalive", 0, "TCP keep-alive period at both ends (0: package net's 15 s; negative: off). Past ~500,000 connections on loopback, 15 s probes overflow the kernel's backlog of loopback packets (net.core.netdev_max_backlog) and it aborts connections whose probes it dropped")
	fs.Parse(args)
	if _, err := findWsServer(*lib); err != nil {
		return err
	}
	if *layout == "" {
		*layout = "ports"
		if *client == "gorilla" {
			*layout = "reuseport"
		}
	}
	if *layout != "ports" && *layout != "reuseport" {
		return fmt.Errorf("-layout %q: ports or reuseport", *layout)
	}
	r := wsScaleRun{Time: time.Now().UTC().Format(time.RFC3339), Lib: *lib, Client: *client, Layout: *layout, Procs: *procs, Clients: *clients, Want: *conns, MemLimit: *memLimit}
	r.Srcs = *srcs
	r.Lean = *lean
	if *idle > 0 {
		r.IdleDeadline = time.Hour.String()
	}
	if *keepAlive != 0 {
		r.KeepAlive = keepAlive.String()
	}
	r.Busy = wsWaitQuiet(0.3, *wait)
	err := wsScaleRunOnce(&r, wsScaleOpts{*serverCPU, *clientCPU, *dialers, *hold, *dialWait, *echo, *conc, *payload, *heapDir, *rate, *keepAlive, *srcs, *idle})
	if err != nil {
		r.Err = err.Error()
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	fmt.Println(string(b))
	fmt.Fprintln(os.Stderr, wsScaleLine(r))
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(*out, "ws-scale.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		line, _ := json.Marshal(r)
		f.Write(append(line, '\n'))
	}
	return err
}

// wsScaleIdle is a scale run's reading after an idle wait.
type wsScaleIdle struct {
	After    string             `json:"after"` // the wait since the first reading
	Held     int                `json:"conns_held"`
	Mem      wsMem              `json:"mem"`
	Pss      []int64            `json:"pss_per_server_proc"`
	MemStats map[string]float64 `json:"server_memstats,omitempty"`
	PerConn  float64            `json:"bytes_per_conn_growth"` // (Pss − Pss before) / conns
	Proj1M   float64            `json:"projected_1m_growth_bytes"`
}

// wsScaleOpts are ws-scale's flags that the record does not keep.
type wsScaleOpts struct {
	serverCPU, clientCPU string
	dialers              int
	hold, dialWait, echo time.Duration
	conc, payload        int
	heapDir              string // "": no heap profile
	rate                 int    // the servers' MemProfileRate; 0: the default
	keepAlive            time.Duration
	srcs                 bool          // each client from its own source address
	idle                 time.Duration // second reading after this (0: none)
}

func wsScaleRunOnce(r *wsScaleRun, o wsScaleOpts) error {
	serverCPU, clientCPU, dialers, hold, echo, conc, payload := o.serverCPU, o.clientCPU, o.dialers, o.hold, o.echo, o.conc, o.payload
	var children []*wsChild
	defer func() { stopAll(children) }()
	// The servers: one port shared, or one each.
	addr := "127.0.0.1:0"
	extra := []string{}
	if r.Layout == "reuseport" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		addr = ln.Addr().String()
		ln.Close()
		extra = append(extra, "-reuseport")
	}
	var servers []*wsChild
	var urls []string
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if r.Lean {
		dir, err := os.MkdirTemp("", "ws-scale-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if exe, err = buildLeanServer(r.Lib, dir); err != nil {
			return err
		}
	}
	// Every child outlives the run (the children's own -life is their
	// guard against a parent that died).
	life := (o.dialWait + hold + o.idle + echo + 5*time.Minute).String()
	for i := range r.Procs {
		args := append([]string{"ws-server", "-lib", r.Lib, "-addr", addr, "-keepalive", o.keepAlive.String(), "-life", life}, extra...)
		if r.IdleDeadline != "" {
			args = append(args, "-idle-deadline", r.IdleDeadline)
		}
		if o.rate > 0 {
			args = append(args, "-memprofilerate", strconv.Itoa(o.rate))
		}
		var env []string
		if r.MemLimit != "" {
			env = append(env, "GOMEMLIMIT="+r.MemLimit)
		}
		srv, err := startWsChildExe(fmt.Sprintf("server %d", i), exe, serverCPU, env, args...)
		if err != nil {
			return err
		}
		children = append(children, srv)
		servers = append(servers, srv)
		l, err := srv.line(30 * time.Second)
		if err != nil {
			return err
		}
		a, ok := strings.CutPrefix(l, "ready ")
		if !ok {
			return fmt.Errorf("server %d said %q", i, l)
		}
		if r.Layout == "ports" || i == 0 {
			urls = append(urls, "ws://"+a+"/ws")
		}
	}
	var spids []int
	fd0 := map[int]int{}
	for _, s := range servers {
		spids = append(spids, s.pid())
		fds, _ := procfs.FDs(s.pid())
		fd0[s.pid()] = len(fds)
	}
	time.Sleep(2 * time.Second)
	if r.Before, err = wsMemOf(spids...); err != nil {
		return err
	}
	r.PssBefore = wsPssEach(spids)
	// The clients, started together.
	var clients []*wsChild
	start := time.Now()
	for i := range r.Clients {
		n := r.Want / r.Clients
		if i < r.Want%r.Clients {
			n++
		}
		args := []string{"ws-load", "-client", r.Client, "-url", strings.Join(urls, ","), "-n", strconv.Itoa(n),
			"-dialers", strconv.Itoa(dialers), "-c", strconv.Itoa(max(1, conc/r.Clients)), "-d", echo.String(), "-payload", strconv.Itoa(payload), "-keepalive", o.keepAlive.String(), "-life", life}
		if r.Layout == "reuseport" || o.srcs {
			args = append(args, "-src", fmt.Sprintf("127.0.0.%d", 10+i))
		}
		cl, err := startWsChild(fmt.Sprintf("client %d", i), clientCPU, args...)
		if err != nil {
			return err
		}
		children = append(children, cl)
		clients = append(clients, cl)
	}
	var cpids []int
	for _, cl := range clients {
		cpids = append(cpids, cl.pid())
		var rep wsLoadReport
		if err := cl.report(o.dialWait, &rep); err != nil {
			return err
		}
		r.Conns += rep.Conns
		r.DialErrors += rep.DialErrors
		if r.FirstError == "" {
			r.FirstError = rep.FirstError
		}
	}
	r.DialSecs = time.Since(start).Seconds()
	if r.Conns == 0 {
		return errors.New("no connection")
	}
	time.Sleep(hold)
	if r.Loaded, err = wsMemOf(spids...); err != nil {
		return err
	}
	r.PssLoaded = wsPssEach(spids)
	r.ClientMem, _ = wsMemOf(cpids...)
	r.MemStats = wsMemStatsOf(servers)
	for _, s := range servers {
		fds, _ := procfs.FDs(s.pid())
		r.PerProc = append(r.PerProc, len(fds)-fd0[s.pid()])
		r.Held += r.PerProc[len(r.PerProc)-1]
	}
	if r.Held < r.Conns*99/100 {
		return fmt.Errorf("the servers hold %d connections of the %d the clients made: connections were lost before the memory was read", r.Held, r.Conns)
	}
	r.PerConn = float64(r.Loaded.Pss-r.Before.Pss) / float64(r.Conns)
	r.Total = float64(r.Loaded.Pss) / float64(r.Conns)
	r.Base1 = float64(r.Before.Pss) / float64(r.Procs)
	r.Proj1MLin = r.Total * 1e6
	r.Proj1MOne = r.Base1 + r.PerConn*1e6
	if o.heapDir != "" {
		if err := wsHeapProfiles(servers, o.heapDir); err != nil {
			return err
		}
	}
	if o.idle > 0 {
		if r.Idle, err = wsScaleIdleRead(r, servers, fd0, o.idle); err != nil {
			return err
		}
	}
	if echo <= 0 {
		return nil
	}
	e := &wsRun{Mode: "echo", Lib: r.Lib, Client: r.Client, Procs: r.Procs, Want: r.Want, Conns: r.Conns, Conc: conc, Payload: payload}
	r.Echo = e
	cpu0, err := wsCPUOf(spids...)
	if err != nil {
		return err
	}
	ccpu0, _ := wsCPUOf(cpids...)
	stat0 := wsCPUStats()
	t0 := time.Now()
	for _, cl := range clients {
		if err := cl.say("echo"); err != nil {
			return err
		}
	}
	for _, cl := range clients {
		var rep wsLoadReport
		if err := cl.report(echo+time.Minute, &rep); err != nil {
			return err
		}
		e.Msgs += rep.Msgs
		e.Bad += rep.Bad
		e.Lost += rep.Lost
		e.Secs = max(e.Secs, rep.Secs)
		e.P50us, e.P99us, e.MaxUs = max(e.P50us, rep.P50us), max(e.P99us, rep.P99us), max(e.MaxUs, rep.MaxUs)
		if rep.FirstError != "" && e.FirstError == "" {
			e.FirstError = rep.FirstError
		}
	}
	wall := time.Since(t0).Seconds()
	stat1 := wsCPUStats()
	e.CPUs = wsCPUShares(stat0, stat1)
	cpu1, err := wsCPUOf(spids...)
	if err != nil {
		return err
	}
	ccpu1, _ := wsCPUOf(cpids...)
	if e.After, err = wsMemOf(spids...); err != nil {
		return err
	}
	e.CPUSecs = (cpu1 - cpu0).Seconds()
	e.CPUPct = 100 * e.CPUSecs / wall
	e.ClientCPUPct = 100 * (ccpu1 - ccpu0).Seconds() / wall
	e.Foreign = wsForeign(stat0, stat1, wall, e.CPUPct+e.ClientCPUPct)
	if e.Msgs > 0 && e.Secs > 0 {
		e.TPS = float64(e.Msgs) / e.Secs
		e.CPUPerMsgUs = e.CPUSecs * 1e6 / float64(e.Msgs)
		e.EER = e.TPS / e.CPUPct
	}
	return nil
}

func wsScaleLine(r wsScaleRun) string {
	lib := r.Lib
	if r.MemLimit != "" {
		lib += " with GOMEMLIMIT=" + r.MemLimit
	}
	s := fmt.Sprintf("scale %s (%s client, %s): %d/%d conns on %d server procs %v in %.1f s; server Pss %.1f MB (before %.1f MB): %.0f B/conn growth, %.0f B/conn total; 1M projected: %.0f MB (total/conn × 1M), %.0f MB (one base + growth × 1M); clients Pss %.1f MB; servers' Go heap in use %.1f MB, stacks %.1f MB",
		lib, r.Client, r.Layout, r.Conns, r.Want, r.Procs, r.PerProc, r.DialSecs, float64(r.Loaded.Pss)/1e6, float64(r.Before.Pss)/1e6,
		r.PerConn, r.Total, r.Proj1MLin/1e6, r.Proj1MOne/1e6, float64(r.ClientMem.Pss)/1e6, r.MemStats["heap_inuse"]/1e6, r.MemStats["stack_inuse"]/1e6)
	if r.FirstError != "" {
		s += fmt.Sprintf("; %d dial errors, first: %s", r.DialErrors, r.FirstError)
	}
	if in := r.Idle; in != nil {
		s += fmt.Sprintf("; after %s idle: %d held, server Pss %.1f MB, %.0f B/conn growth, 1M projected %.0f MB (one base + growth × 1M), Go heap in use %.1f MB, released %.1f MB",
			in.After, in.Held, float64(in.Mem.Pss)/1e6, in.PerConn, in.Proj1M/1e6, in.MemStats["heap_inuse"]/1e6, in.MemStats["heap_released"]/1e6)
	}
	if e := r.Echo; e != nil {
		s += fmt.Sprintf("; echo (%d loops): %.0f msg/s, %.2f µs server CPU/msg, servers CPU %.0f%%, clients CPU %.0f%%, p50 %.0f µs, p99 %.0f µs, %d bad, %d lost, servers Pss after %.1f MB; %s, foreign %.0f%%",
			e.Conc, e.TPS, e.CPUPerMsgUs, e.CPUPct, e.ClientCPUPct, e.P50us, e.P99us, e.Bad, e.Lost, float64(e.After.Pss)/1e6, e.CPUs, e.Foreign)
		if e.FirstError != "" {
			s += "; echo's first error: " + e.FirstError
		}
	}
	if r.Err != "" {
		s += "; FAILED: " + r.Err
	}
	return s
}

// buildLeanServer builds cmd/ws-server-LIB into dir and returns its path.
func buildLeanServer(lib, dir string) (string, error) {
	pkg := "./cmd/ws-server-" + lib
	if _, err := os.Stat(pkg); err != nil {
		return "", fmt.Errorf("-lean: no %s here (gale and nbio have one; run from the bench directory): %v", pkg, err)
	}
	exe := filepath.Join(dir, "ws-server-"+lib)
	out, err := exec.Command("go", "build", "-o", exe, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("-lean: go build %s: %v\n%s", pkg, err, out)
	}
	return exe, nil
}

// wsScaleIdleRead waits d with the connections idle and reads the servers'
// memory again; it fails if they lost connections meanwhile.
func wsScaleIdleRead(r *wsScaleRun, servers []*wsChild, fd0 map[int]int, d time.Duration) (*wsScaleIdle, error) {
	time.Sleep(d)
	in := &wsScaleIdle{After: d.String()}
	var pids []int
	for _, s := range servers {
		pids = append(pids, s.pid())
		fds, _ := procfs.FDs(s.pid())
		in.Held += len(fds) - fd0[s.pid()]
	}
	if in.Held < r.Conns*99/100 {
		return nil, fmt.Errorf("after %v idle the servers hold %d connections of %d", d, in.Held, r.Conns)
	}
	var err error
	if in.Mem, err = wsMemOf(pids...); err != nil {
		return nil, err
	}
	in.Pss = wsPssEach(pids)
	in.MemStats = wsMemStatsOf(servers)
	in.PerConn = float64(in.Mem.Pss-r.Before.Pss) / float64(r.Conns)
	in.Proj1M = r.Base1 + in.PerConn*1e6
	return in, nil
}

// wsHeapProfiles has each server write its heap profile, server-N.pprof
// in dir, and waits for them.
func wsHeapProfiles(servers []*wsChild, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i, s := range servers {
		path, err := filepath.Abs(filepath.Join(dir, fmt.Sprintf("server-%d.pprof", i)))
		if err != nil {
			return err
		}
		if err := s.say("heap " + path); err != nil {
			return err
		}
		if l, err := s.line(time.Minute); err != nil || l != "ok" {
			return fmt.Errorf("server %d's heap profile: %q, %v", i, l, err)
		}
	}
	return nil
}

// wsMemStatsOf sums the servers' runtime memory figures ("memstats").
func wsMemStatsOf(servers []*wsChild) map[string]float64 {
	sum := map[string]float64{}
	for _, s := range servers {
		var m map[string]float64
		if s.say("memstats") != nil || s.report(10*time.Second, &m) != nil {
			return nil
		}
		for k, v := range m {
			sum[k] += v
		}
	}
	return sum
}

// wsPssEach is each process's Pss, in bytes (0 if unreadable).
func wsPssEach(pids []int) []int64 {
	pss := make([]int64, len(pids))
	for i, pid := range pids {
		pss[i], _ = wsPss(pid)
	}
	return pss
}
