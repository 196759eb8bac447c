package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envInstance makes the test binary run as a chat instance (TestMain):
// the test starts its instances from its own binary, built already.
const envInstance = "CHAT_CLUSTER_INSTANCE"

// needTools skips the test when a program it runs is missing, unless CI
// is set: then the run fails, as CI installs them (.ci/run).
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (apt-get install haproxy redis-server), and CI is set", tool)
			}
			t.Skipf("%s is not installed (apt-get install haproxy redis-server): skipping the cluster test", tool)
		}
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// process is a program the test started; it is killed, by its PID, at
// the end of the test if it still runs.
type process struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func start(t *testing.T, name string, env []string, prog string, args ...string) *process {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p := &process{name: name, log: logf.Name(), exited: make(chan struct{})}
	p.cmd = exec.Command(prog, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf // a file: no copying goroutine
	err = p.cmd.Start()
	logf.Close()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			p.dumpLog(t)
		}
	})
	return p
}

// stop sends SIGTERM and waits up to d for the process to exit.
func (p *process) stop(t *testing.T, d time.Duration) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v of SIGTERM", p.name, d)
	}
}

// wait waits up to d for the process to exit by itself.
func (p *process) wait(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(d):
		t.Fatalf("%s did not exit within %v", p.name, d)
	}
}

// dumpLog logs the last lines of the process's output.
func (p *process) dumpLog(t *testing.T) {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	lines = lines[max(0, len(lines)-30):]
	t.Logf("%s (%s), last lines:\n\t%s", p.name, p.log, strings.Join(lines, "\n\t"))
}

// waitFor polls ok every 20 ms until it returns nil, or fails the test
// after d with its last error.
func waitFor(t *testing.T, d time.Duration, what string, ok func() error) {
	t.Helper()
	if err := poll(d, ok); err != nil {
		t.Fatalf("%s: not within %v: %v", what, d, err)
	}
}

// poll calls ok every 20 ms until it returns nil, for up to d, and
// returns its last error.
func poll(d time.Duration, ok func() error) error {
	deadline := time.Now().Add(d)
	for {
		err := ok()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var httpClient = &http.Client{Timeout: 2 * time.Second}

// get returns the body of http://addr/path, or an error unless it is 200.
func get(addr, path string) (string, error) {
	resp, err := httpClient.Get("http://" + addr + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return b.String(), sc.Err()
}

// startRedis runs redis-server on a free port, in its own directory,
// without persistence.
func startRedis(t *testing.T) string {
	addr := freeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	start(t, "redis", nil, "redis-server", "--bind", "127.0.0.1", "--port", port,
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	waitFor(t, 10*time.Second, "redis-server listening", func() error {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Second))
		fmt.Fprintf(c, "PING\r\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		if err == nil && line != "+PONG\r\n" {
			err = fmt.Errorf("PING answered %q", line)
		}
		return err
	})
	return addr
}

// instance is the command line of a chat instance: the test binary (see
// TestMain), on addr, handing its listener over on control.
type instance struct {
	name, addr, control, redis, proxy string
}

// spawn starts a process of the instance; a process already running
// hands its listener over to it, and exits.
func (in instance) spawn(t *testing.T) *process {
	t.Helper()
	// Built with the race detector, it would wait a second at exit for
	// its reports: they are written at once.
	env := []string{envInstance + "=1", "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}
	return start(t, in.name, env, os.Args[0],
		"-addr", in.addr, "-control", in.control, "-redis", in.redis, "-proxy", in.proxy,
		"-drain", drainTime.String(), "-shutdown", "5s")
}

// waitHealthy waits until the instance's /healthz, served by p, is 200.
func (in instance) waitHealthy(t *testing.T, p *process) {
	t.Helper()
	waitFor(t, 10*time.Second, in.name+" healthy", func() error {
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited", in.name)
		default:
		}
		_, err := get(in.addr, "/healthz")
		return err
	})
}

// drainTime is the instances' -drain: HAProxy checks every 200 ms and
// takes an instance out after two failures.
const drainTime = time.Second

// startHAProxy writes haproxy.cfg from the template and runs HAProxy in
// the foreground, then waits until it forwards to an instance.
// It returns the path of HAProxy's stats socket.
func startHAProxy(t *testing.T, front string, servers []string) (stats string) {
	t.Helper()
	tmpl, err := os.ReadFile("haproxy.cfg.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stats = filepath.Join(dir, "haproxy.sock")
	cfg := strings.NewReplacer("@FRONT@", front, "@S1@", servers[0], "@S2@", servers[1], "@S3@", servers[2],
		"@STATS@", stats).Replace(string(tmpl))
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start(t, "haproxy", nil, "haproxy", "-db", "-f", path)
	waitFor(t, 10*time.Second, "haproxy forwarding", func() error {
		_, err := get(front, "/healthz")
		return err
	})
	return stats
}

// backendStat returns the sum over the backend's servers of the fields
// of HAProxy's "show stat" (management.txt, section 9.1) named by names:
// econ counts connections to a server that failed (refused), wretr the
// retries, wredis the redispatches.
func backendStat(t *testing.T, sock string, names ...string) map[string]uint64 {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "show stat\n")
	sc := bufio.NewScanner(c)
	var cols []string
	sum := make(map[string]uint64)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if h, ok := strings.CutPrefix(sc.Text(), "# "); ok {
			cols = strings.Split(h, ",")
			continue
		}
		if len(f) < 2 || f[0] != "instances" || f[1] == "BACKEND" {
			continue
		}
		for i, col := range cols {
			if i < len(f) && slices.Contains(names, col) {
				v, _ := strconv.ParseUint(f[i], 10, 64)
				sum[col] += v
			}
		}
	}
	if err := sc.Err(); err != nil || cols == nil {
		t.Fatalf("show stat on %s: %v, header %q", sock, err, cols)
	}
	return sum
}

// stopContext is a context that ends with the test.
func stopContext(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// streamLen returns the length of the Redis Stream key (XLEN), asked in
// RESP by hand: the test needs no Redis client for one number.
func streamLen(t *testing.T, addr, key string) uint64 {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "XLEN %s\r\n", key)
	line, err := bufio.NewReader(c).ReadString('\n')
	n, perr := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, ":")), 10, 64)
	if err != nil || !strings.HasPrefix(line, ":") || perr != nil {
		t.Fatalf("XLEN %s answered %q, %v", key, line, err)
	}
	return n
}
