package httpd_test

// The hostile-clients measurement (issue 31, docs/bench/http-hostile.md):
// N slow uploads (a head announcing 1 MiB, one byte of body, then
// nothing) and M long polls (a GET whose handler waits), from other
// processes, against a server at its default settings; the server
// measures what each costs it and how long a new GET takes beside them.
// httpd's Server on each backend and net/http's Server are measured
// alike.
//
//	GALE_HOSTILE=10000,9900 go test -count=1 -run '^TestHostileMeasure$' -v ./httpd/
//
// GALE_HOSTILE is "N,M", or N for both; without it the test runs 100 of
// each, as go test ./... does. The server holds N+M descriptors and may
// hold 20,000 in all: 10,000 slow uploads leave room for 9,900 long
// polls. Each measurement runs in three children of the test binary
// (TestHostileChild): the server, which measures itself, and one
// client per kind.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/tools/procfs"
)

const (
	// hostileRoleEnv names a child's role: "server", "uploads" or
	// "polls".
	hostileRoleEnv = "GALE_HOSTILE_ROLE"
	// hostileCI is the count of each kind without GALE_HOSTILE.
	hostileCI = 100
	// hostileGood is the well-behaved GETs timed, idle and beside the
	// hostile clients.
	hostileGood = 50
	// hostileMaxLatency is what a new GET may take beside the hostile
	// clients (issue 31), checked for httpd without -race.
	hostileMaxLatency = 100 * time.Millisecond
)

// hostileResult is what a server child measured: per slow upload and
// per long poll, the goroutines and bytes each costs, and the GETs'
// times.
type hostileResult struct {
	Server        string
	Uploads       int
	Polls         int
	Upload, Poll  hostileCost
	Idle, Besides []time.Duration
}

type hostileCost struct {
	Goroutines       float64
	Heap, Stack, RSS float64 // bytes
}

// TestHostileMeasure measures, for httpd's Server on each backend and
// for net/http's, with N slow uploads and M long polls open: what each
// costs the server, and the time of hostileGood new GETs beside them
// against the same with none open.
func TestHostileMeasure(t *testing.T) {
	if os.Getenv(hostileRoleEnv) != "" {
		t.Skip("a child of the measurement")
	}
	n, m := hostileCounts(t)
	servers := []string{"httpd-epoll", "httpd-io_uring", "net/http"}
	if err := poller.Available(poller.IOURing); err != nil {
		t.Logf("io_uring unavailable here (%v): not measured", err)
		servers = slices.Delete(servers, 1, 2)
	}
	var rows []hostileResult
	for _, server := range servers {
		r := hostileRun(t, server, n, m)
		rows = append(rows, r)
		if strings.HasPrefix(server, "httpd") && !raceEnabled && n+m >= 2000 {
			if worst := slices.Max(r.Besides); worst >= hostileMaxLatency {
				t.Errorf("%s: a GET beside %d slow uploads and %d long polls took up to %v, want under %v",
					server, n, m, worst, hostileMaxLatency)
			}
		}
	}
	std := rows[len(rows)-1]
	for _, r := range rows[:len(rows)-1] {
		if r.Upload.Heap > 2*std.Upload.Heap {
			t.Errorf("%s: %.0f B of heap per slow upload, more than twice net/http's %.0f", r.Server, r.Upload.Heap, std.Upload.Heap)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d slow uploads, %d long polls; %s, GOMAXPROCS %d, race %v\n", n, m, runtime.Version(), runtime.GOMAXPROCS(0), raceEnabled)
	fmt.Fprintf(&b, "| server | per slow upload: goroutines, heap, stacks, RSS | per long poll: goroutines, heap, stacks, RSS | GET alone p50 / max | GET beside them p50 / max |\n")
	fmt.Fprintf(&b, "|---|---|---|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %v / %v | %v / %v |\n", r.Server, r.Upload, r.Poll,
			median(r.Idle), slices.Max(r.Idle), median(r.Besides), slices.Max(r.Besides))
	}
	t.Log("\n" + b.String())
}

func (c hostileCost) String() string {
	return fmt.Sprintf("%.2f, %.0f B, %.0f B, %.0f B", c.Goroutines, c.Heap, c.Stack, c.RSS)
}

// hostileCounts reads GALE_HOSTILE.
func hostileCounts(t *testing.T) (n, m int) {
	s := os.Getenv("GALE_HOSTILE")
	if s == "" {
		return hostileCI, hostileCI
	}
	a, b, two := strings.Cut(s, ",")
	n, err := strconv.Atoi(a)
	m = n
	if err == nil && two {
		m, err = strconv.Atoi(b)
	}
	if err != nil || n < 1 || m < 1 || n+m > 19900 {
		t.Fatalf("GALE_HOSTILE=%q: want N or N,M with N+M at most 19,900 (20,000 open files)", s)
	}
	return n, m
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(10 * time.Microsecond)
}

// hostileRun measures server with n slow uploads and m long polls.
func hostileRun(t *testing.T, server string, n, m int) hostileResult {
	t.Helper()
	bound := time.Minute + time.Duration(n+m)*5*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 3*bound)
	t.Cleanup(cancel)
	env := []string{hostileRoleEnv + "=server", "GALE_HOSTILE_SERVER=" + server}
	srv := startChild(t, ctx, env...)
	addr := srv.next(t, "listening", bound)
	for _, kind := range []struct {
		role string
		n    int
	}{{"uploads", n}, {"polls", m}} {
		cl := startChild(t, ctx, hostileRoleEnv+"="+kind.role, "GALE_HOSTILE_ADDR="+addr, "GALE_HOSTILE_N="+strconv.Itoa(kind.n))
		cl.next(t, "sent", bound)
		fmt.Fprintf(srv.in, "%s %d\n", kind.role, kind.n)
		srv.next(t, "measured", bound)
		defer cl.in.Close() // the client closes its connections and ends
	}
	io.WriteString(srv.in, "result\n")
	var r hostileResult
	if err := json.Unmarshal([]byte(srv.next(t, "result", bound)), &r); err != nil {
		t.Fatalf("the server's result: %v", err)
	}
	r.Uploads, r.Polls = n, m
	return r
}

// child is a running child of the measurement: its input, and its
// output's lines.
type child struct {
	in    io.WriteCloser
	lines chan string
}

// startChild runs this test binary's TestHostileChild with env.
func startChild(t *testing.T, ctx context.Context, env ...string) *child {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHostileChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{in: in, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "hostile: "); ok {
				c.lines <- line
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() {
			for range c.lines { // the scanner ends with the child's output
			}
			cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
			<-done
			t.Errorf("a child of the measurement did not end within a minute of its input's end")
		}
	})
	return c
}

// next returns c's next line, which must start with want, within d.
func (c *child) next(t *testing.T, want string, d time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("the child ended before its %q line", want)
		}
		rest, found := strings.CutPrefix(line, want)
		if !found {
			t.Fatalf("child said %q, want %q", line, want)
		}
		return strings.TrimPrefix(rest, " ")
	case <-time.After(d):
		t.Fatalf("no %q from the child within %v", want, d)
	}
	return ""
}

// TestHostileChild is a child of TestHostileMeasure, by hostileRoleEnv;
// skipped otherwise.
func TestHostileChild(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GALE_HOSTILE_N"))
	addr := os.Getenv("GALE_HOSTILE_ADDR")
	switch os.Getenv(hostileRoleEnv) {
	case "server":
		hostileServer(t, os.Getenv("GALE_HOSTILE_SERVER"))
	case "uploads":
		hostileClient(t, addr, n, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nx")
	case "polls":
		hostileClient(t, addr, n, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	case sseServerRole: // sse_measure_linux_test.go's
		sseServer(t, os.Getenv("GALE_HOSTILE_SERVER"))
	case sseClientRole:
		sseClients(t, addr, n)
	default:
		t.Skip("run by TestHostileMeasure")
	}
}

// hostileClient opens n connections to addr, sends req on each, says
// "sent", and closes them when its input ends.
func hostileClient(t *testing.T, addr string, n int, req string) {
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatalf("write on %d: %v", i, err)
		}
	}
	fmt.Println("hostile: sent", n)
	io.Copy(io.Discard, os.Stdin)
}

// hostileServer serves at default settings, times hostileGood GETs, says
// where it listens, and then measures what each kind of hostile client
// costs as the parent names it, and times hostileGood GETs again.
func hostileServer(t *testing.T, server string) {
	var uploading, polling atomic.Int64
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/upload":
			uploading.Add(1)
			io.Copy(io.Discard, r.Body)
			uploading.Add(-1)
		case "/wait":
			polling.Add(1)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			polling.Add(-1)
		default:
			io.WriteString(w, "ok")
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	done := make(chan error, 1)
	if server == "net/http" {
		srv := &http.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
		go func() { done <- srv.Serve(ln) }()
		defer srv.Close()
	} else {
		srv := &httpd.Server{Handler: h, ErrorLog: log.New(io.Discard, "", 0)}
		switch server {
		case "httpd-epoll":
			srv.Engine.Backend = backend.Epoll
		case "httpd-io_uring":
			srv.Engine.Backend = backend.IOURing
		}
		go func() { done <- srv.Serve(ln) }()
		defer srv.Close()
	}
	defer close(release)
	r := hostileResult{Server: server, Idle: timeGETs(t, addr)}
	fmt.Println("hostile: listening", addr)
	in := bufio.NewReader(os.Stdin)
	for _, kind := range []struct {
		counter *atomic.Int64
		cost    *hostileCost
	}{{&uploading, &r.Upload}, {&polling, &r.Poll}} {
		before := sample()
		line, _ := in.ReadString('\n')
		_, count, _ := strings.Cut(strings.TrimSpace(line), " ")
		n, _ := strconv.Atoi(count)
		settle(t, func() bool { return kind.counter.Load() == int64(n) })
		after := sample()
		*kind.cost = after.per(before, n)
		fmt.Println("hostile: measured")
	}
	in.ReadString('\n')
	r.Besides = timeGETs(t, addr)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("hostile: result", string(b))
	io.Copy(io.Discard, os.Stdin) // until the parent is done with the clients
}

// settle waits for cond, then for the process's goroutines to stay put
// for 500 ms (the one byte of each upload read), within a few minutes.
func settle(t *testing.T, cond func() bool) {
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the hostile clients did not all reach their handlers")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for g, still := -1, 0; still < 50; time.Sleep(10 * time.Millisecond) {
		if ng := runtime.NumGoroutine(); ng != g {
			g, still = ng, 0
		} else {
			still++
		}
	}
}

// timeGETs times hostileGood GETs of "ok" on new connections to addr,
// one after the other.
func timeGETs(t *testing.T, addr string) []time.Duration {
	var d []time.Duration
	for i := range hostileGood {
		t0 := time.Now()
		if err := getOK(addr, t0.Add(10*time.Second)); err != nil {
			t.Fatalf("GET %d: %v after %v", i, err, time.Since(t0))
		}
		d = append(d, time.Since(t0))
	}
	return d
}

// getOK dials addr and GETs "ok", by deadline.
func getOK(addr string, deadline time.Time) error {
	c, err := net.DialTimeout("tcp", addr, time.Until(deadline))
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "ok" {
		return fmt.Errorf("got %q, %v", body, err)
	}
	return nil
}

// mem is a process's goroutines and memory at a moment.
type mem struct {
	goroutines       int
	heap, stack, rss int64
}

// sample collects the garbage, returns the freed pages to the system,
// and samples.
func sample() mem {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, _ := procfs.RSS(os.Getpid())
	return mem{goroutines: runtime.NumGoroutine(), heap: int64(m.HeapInuse), stack: int64(m.StackInuse), rss: rss}
}

// per returns what each of n things cost between before and m.
func (m mem) per(before mem, n int) hostileCost {
	k := float64(n)
	return hostileCost{
		Goroutines: float64(m.goroutines-before.goroutines) / k,
		Heap:       float64(m.heap-before.heap) / k,
		Stack:      float64(m.stack-before.stack) / k,
		RSS:        float64(m.rss-before.rss) / k,
	}
}
