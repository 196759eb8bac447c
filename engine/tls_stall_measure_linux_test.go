package engine_test

// The stalled-handshake measurement (issue 31, docs/bench/tls-stall.md):
// N connections stall their TLS handshake against a server, from another
// process; the server measures what each costs it and how long a new
// client's handshake takes meanwhile. Engine.ListenTLS on each backend
// and net/http's Server.ServeTLS are measured alike.
//
//	GALE_STALL=10000 go test -count=1 -run '^TestTLSStallMeasure$' -v ./engine/
//
// Without GALE_STALL it runs 100 stalled handshakes, as CI does. Each
// measurement runs in two children of the test binary (this file's
// TestTLSStallChild): the server, which measures itself, and the stalling
// client, each under the limit of 20,000 open files.

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

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/tlstest"
	"github.com/galeio/gale/internal/tools/procfs"
)

const (
	// stallRoleEnv names a child's role: "server" or "client".
	stallRoleEnv = "GALE_STALL_ROLE"
	// stallCIConns is the stalled handshakes of a run without GALE_STALL.
	stallCIConns = 100
	// stallGood is the well-behaved handshakes timed, idle and beside the
	// stalled ones.
	stallGood = 50
	// stallMaxLatency is what a new client's handshake may take beside
	// the stalled ones (issue 31), checked for the engine without -race.
	stallMaxLatency = 100 * time.Millisecond
)

// stallResult is what a server child measured.
type stallResult struct {
	Server, Kind     string
	Conns            int
	Goroutines       float64 // per stalled handshake
	Heap, Stack, RSS float64 // bytes per stalled handshake
	Idle, Stalled    []time.Duration
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestTLSStallMeasure measures, for ListenTLS on each backend and for
// net/http, with N handshakes stalled of each kind (GALE_STALL, 100 by
// default): the goroutines, heap, stacks and resident memory each costs
// the server, and the handshake time of stallGood new clients, against
// the same with nothing stalled. The kinds: "promise", a 9-byte record
// announcing a 256-byte ClientHello (stallPromise), and "hello", a whole
// ClientHello and then silence.
func TestTLSStallMeasure(t *testing.T) {
	if os.Getenv(stallRoleEnv) != "" {
		t.Skip("a child of the measurement")
	}
	n := stallCIConns
	if s := os.Getenv("GALE_STALL"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 || n > 18000 {
			t.Fatalf("GALE_STALL=%q: want a count of connections from 1 to 18,000 (20,000 open files)", s)
		}
	}
	servers := []string{"engine-epoll", "engine-io_uring", "net/http"}
	if err := poller.Available(poller.IOURing); err != nil {
		t.Logf("io_uring unavailable here (%v): not measured", err)
		servers = slices.Delete(servers, 1, 2)
	}
	var rows []stallResult
	for _, kind := range []string{"promise", "hello"} {
		for _, server := range servers {
			// A sub-test each, so that its children end with it.
			t.Run(kind+"/"+strings.ReplaceAll(server, "/", "-"), func(t *testing.T) {
				r := stallRun(t, server, kind, n)
				rows = append(rows, r)
				if strings.HasPrefix(server, "engine") && kind == "promise" && r.Goroutines > 0.01 {
					t.Errorf("%.3f goroutines per stalled handshake, want none", r.Goroutines)
				}
				if strings.HasPrefix(server, "engine") && !raceEnabled && n >= 1000 {
					if m := slices.Max(r.Stalled); m >= stallMaxLatency {
						t.Errorf("a new handshake beside %d stalled ones took up to %v, want under %v", n, m, stallMaxLatency)
					}
				}
			})
		}
	}
	if len(rows) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d stalled handshakes; %s, GOMAXPROCS %d, race %v\n", n, runtime.Version(), runtime.GOMAXPROCS(0), raceEnabled)
	fmt.Fprintf(&b, "| kind | server | goroutines | heap B | stacks B | RSS B | handshake idle p50 / max | beside the stalled p50 / max |\n")
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %.2f | %.0f | %.0f | %.0f | %v / %v | %v / %v |\n", r.Kind, r.Server,
			r.Goroutines, r.Heap, r.Stack, r.RSS,
			median(r.Idle).Round(10*time.Microsecond), slices.Max(r.Idle).Round(10*time.Microsecond),
			median(r.Stalled).Round(10*time.Microsecond), slices.Max(r.Stalled).Round(10*time.Microsecond))
	}
	t.Log("per stalled handshake:\n" + b.String())
}

// stallChild is a running child of the measurement: its input, and its
// output's lines.
type stallChild struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

// startStallChild runs this test binary's TestTLSStallChild with env.
func startStallChild(t *testing.T, ctx context.Context, env ...string) *stallChild {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestTLSStallChild$", "-test.count=1")
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
	c := &stallChild{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "stall: "); ok {
				c.lines <- line
			} else if line := sc.Text(); line != "PASS" {
				fmt.Fprintln(os.Stderr, "child:", line) // a failure's report
			}
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() {
			for range c.lines { // the scanner's goroutine ends with the child's output
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
func (c *stallChild) next(t *testing.T, want string, d time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			t.Fatalf("the child ended before its %q line", want)
		}
		rest, found := strings.CutPrefix(line, want+" ")
		if !found {
			t.Fatalf("child said %q, want %q", line, want)
		}
		return rest
	case <-time.After(d):
		t.Fatalf("no %q from the child within %v", want, d)
	}
	return ""
}

// stallRun measures server with n handshakes stalled as kind.
func stallRun(t *testing.T, server, kind string, n int) stallResult {
	t.Helper()
	bound := time.Minute + time.Duration(n)*10*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 2*bound)
	t.Cleanup(cancel)
	env := []string{stallRoleEnv + "=server", "GALE_STALL_SERVER=" + server, "GALE_STALL_KIND=" + kind, "GALE_STALL_N=" + strconv.Itoa(n)}
	if b, ok := strings.CutPrefix(server, "engine-"); ok {
		env = append(env, poller.EnvBackend+"="+b)
	}
	srv := startStallChild(t, ctx, env...)
	addr := srv.next(t, "listening", bound)
	cl := startStallChild(t, ctx, stallRoleEnv+"=client", "GALE_STALL_ADDR="+addr, "GALE_STALL_KIND="+kind, "GALE_STALL_N="+strconv.Itoa(n))
	cl.next(t, "sent", bound)
	io.WriteString(srv.in, "measure\n")
	var r stallResult
	if err := json.Unmarshal([]byte(srv.next(t, "result", bound)), &r); err != nil {
		t.Fatalf("the server's result: %v", err)
	}
	cl.in.Close() // the client closes its connections and ends
	return r
}

// TestTLSStallChild is a child of TestTLSStallMeasure: the server or the
// stalling client, by stallRoleEnv; skipped otherwise.
func TestTLSStallChild(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GALE_STALL_N"))
	kind := os.Getenv("GALE_STALL_KIND")
	switch os.Getenv(stallRoleEnv) {
	case "server":
		stallServer(t, os.Getenv("GALE_STALL_SERVER"), kind, n)
	case "client":
		stallClient(t, os.Getenv("GALE_STALL_ADDR"), kind, n)
	default:
		t.Skip("run by TestTLSStallMeasure")
	}
}

// stallClient opens n connections to addr, stalls each as kind, says
// "sent", and closes them when its input ends.
func stallClient(t *testing.T, addr, kind string, n int) {
	first := stallPromise
	if kind == "hello" {
		first = clientHello(t)
	}
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, etWait)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := c.Write(first); err != nil {
			t.Fatalf("write on %d: %v", i, err)
		}
	}
	fmt.Println("stall: sent", n)
	io.Copy(io.Discard, os.Stdin)
}

// stallServer serves TLS as server, times stallGood handshakes, says
// where it listens, and once told to, waits for the stalled handshakes,
// measures what they cost and times stallGood handshakes again.
func stallServer(t *testing.T, server, kind string, n int) {
	cfg := tlstest.Get().ServerConfig()
	var addr string
	var count func() (in, out uint64)
	switch server {
	case "net/http":
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		cl := &stallCountListener{Listener: ln}
		srv := &http.Server{
			Handler:   http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}),
			TLSConfig: cfg,
			ErrorLog:  log.New(io.Discard, "", 0),
		}
		done := make(chan error, 1)
		go func() { done <- srv.ServeTLS(cl, "", "") }()
		defer func() {
			srv.Close()
			<-done
		}()
		addr, count = ln.Addr().String(), cl.counts
	default:
		e, err := engine.New(etEchoHandler(), engine.Options{HandshakeTimeout: 10 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Start(); err != nil {
			t.Fatal(err)
		}
		defer e.Stop()
		a, err := e.ListenTLS("tcp", "127.0.0.1:0", cfg)
		if err != nil {
			t.Fatal(err)
		}
		addr = a.String()
		count = func() (uint64, uint64) {
			s := e.Stats().Total()
			return s.BytesIn, s.BytesOut
		}
	}
	r := stallResult{Server: server, Kind: kind, Conns: n}
	r.Idle = stallTime(t, addr)
	before := stallSample()
	in0, _ := count()
	fmt.Println("stall: listening", addr)

	bufio.NewReader(os.Stdin).ReadString('\n')
	want := uint64(n * len(stallPromise))
	if kind == "hello" {
		want = uint64(n * len(clientHello(t)))
	}
	deadline := time.Now().Add(time.Minute + time.Duration(n)*10*time.Millisecond)
	for in, _ := count(); in < in0+want; in, _ = count() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d stalled bytes received", in-in0, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The server has them all; the handshakes that answer a whole
	// ClientHello compute, then wait: steady once nothing moves for 500 ms.
	for g, out, still := -1, uint64(0), 0; still < 50; {
		_, o := count()
		if ng := runtime.NumGoroutine(); ng != g || o != out {
			g, out, still = ng, o, 0
		} else {
			still++
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not settle")
		}
		time.Sleep(10 * time.Millisecond)
	}
	after := stallSample()
	k := float64(n)
	r.Goroutines = float64(after.goroutines-before.goroutines) / k
	r.Heap = float64(after.heap-before.heap) / k
	r.Stack = float64(after.stack-before.stack) / k
	r.RSS = float64(after.rss-before.rss) / k
	r.Stalled = stallTime(t, addr)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("stall: result", string(b))
	io.Copy(io.Discard, os.Stdin) // until the parent is done with the clients
}

// stallTime times stallGood handshakes with addr, one after the other.
func stallTime(t *testing.T, addr string) []time.Duration {
	var d []time.Duration
	for i := range stallGood {
		took, err := stallGoodHandshakeWithin(addr, etWait)
		if err != nil {
			t.Fatalf("handshake %d: %v after %v", i, err, took)
		}
		d = append(d, took)
	}
	return d
}

// stallMem is a process's goroutines and memory at a moment.
type stallMem struct {
	goroutines       int
	heap, stack, rss int64
}

// stallSample collects the garbage, returns the freed pages to the
// system, and samples.
func stallSample() stallMem {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	rss, _ := procfs.RSS(os.Getpid())
	return stallMem{goroutines: runtime.NumGoroutine(), heap: int64(m.HeapInuse), stack: int64(m.StackInuse), rss: rss}
}

// stallCountListener counts the bytes its connections read and write.
type stallCountListener struct {
	net.Listener
	in, out atomic.Uint64
}

func (l *stallCountListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallCountConn{Conn: c, l: l}, nil
}

func (l *stallCountListener) counts() (uint64, uint64) { return l.in.Load(), l.out.Load() }

type stallCountConn struct {
	net.Conn
	l *stallCountListener
}

func (c *stallCountConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.l.in.Add(uint64(n))
	return n, err
}

func (c *stallCountConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.l.out.Add(uint64(n))
	return n, err
}
