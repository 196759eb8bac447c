package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/galeio/gale/internal/tools/procfs"
)

// wsChild is a child process of ws-bench or ws-scale: a server or a
// client, this binary run with a subcommand, pinned with taskset when
// cpus is set. Its stdout is read line by line; closing its stdin asks it
// to exit.
type wsChild struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *wsTail
	done   chan struct{}
	err    error // Wait's, once done is closed
}

// wsEnv is the children's environment: this one without any memory limit
// (GOMEMLIMIT) or GOGC, GODEBUG and GOMAXPROCS settings, so that every
// library runs with the runtime's defaults.
func wsEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GOMEMLIMIT", "GOGC", "GODEBUG", "GOMAXPROCS":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// startWsChild starts this binary with args, pinned to cpus ("" for no
// pinning).
func startWsChild(name, cpus string, args ...string) (*wsChild, error) {
	return startWsChildEnv(name, cpus, nil, args...)
}

// startWsChildEnv is startWsChild with env (KEY=VALUE) added to wsEnv's:
// a configuration that is not the runtime's default, to be labelled as
// such.
func startWsChildEnv(name, cpus string, env []string, args ...string) (*wsChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return startWsChildExe(name, exe, cpus, env, args...)
}

// startWsChildExe is startWsChildEnv running exe instead of this binary.
func startWsChildExe(name, exe, cpus string, env []string, args ...string) (*wsChild, error) {
	var err error
	var cmd *exec.Cmd
	if cpus != "" {
		cmd = exec.Command("taskset", append([]string{"-c", cpus, exe}, args...)...)
	} else {
		cmd = exec.Command(exe, args...)
	}
	cmd.Env = append(wsEnv(), env...)
	ch := &wsChild{name: name, cmd: cmd, lines: make(chan string, 16), stderr: &wsTail{}, done: make(chan struct{})}
	cmd.Stderr = ch.stderr
	if ch.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			ch.lines <- sc.Text()
		}
		close(ch.lines)
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	return ch, nil
}

// pid is the child's (taskset execs it in place).
func (ch *wsChild) pid() int { return ch.cmd.Process.Pid }

// line returns the child's next line of output, waiting at most d.
func (ch *wsChild) line(d time.Duration) (string, error) {
	select {
	case l, ok := <-ch.lines:
		if !ok {
			<-ch.done
			return "", fmt.Errorf("%s exited (%v): %s", ch.name, ch.err, ch.stderr)
		}
		return l, nil
	case <-time.After(d):
		return "", fmt.Errorf("%s: nothing said in %v; stderr: %s", ch.name, d, ch.stderr)
	}
}

// report reads the child's next JSON line into v.
func (ch *wsChild) report(d time.Duration, v any) error {
	l, err := ch.line(d)
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(l), v); err != nil {
		return fmt.Errorf("%s said %q: %v", ch.name, l, err)
	}
	return nil
}

// say writes a line to the child's stdin.
func (ch *wsChild) say(s string) error {
	_, err := io.WriteString(ch.stdin, s+"\n")
	return err
}

// stop closes the child's stdin and waits up to 10 s for it to exit,
// then kills it (by its PID) and waits.
func (ch *wsChild) stop() {
	ch.stdin.Close()
	select {
	case <-ch.done:
		return
	case <-time.After(10 * time.Second):
	}
	ch.cmd.Process.Kill()
	<-ch.done
}

// stopAll stops children in parallel.
func stopAll(chs []*wsChild) {
	var wg sync.WaitGroup
	for _, ch := range chs {
		if ch != nil {
			wg.Go(ch.stop)
		}
	}
	wg.Wait()
}

// wsTail keeps the last 4 KiB a child wrote to stderr.
type wsTail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *wsTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-4096:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *wsTail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// wsMem is a set of processes' memory: the sums of their VmRSS and of
// their Pss (smaps_rollup), in bytes. Pss divides the pages they share
// (the binary's text, for one) among them.
type wsMem struct {
	RSS int64 `json:"rss"`
	Pss int64 `json:"pss"`
}

func wsMemOf(pids ...int) (wsMem, error) {
	var m wsMem
	for _, pid := range pids {
		rss, err := procfs.RSS(pid)
		if err != nil {
			return m, err
		}
		pss, err := wsPss(pid)
		if err != nil {
			return m, err
		}
		m.RSS += rss
		m.Pss += pss
	}
	return m, nil
}

// wsPss reads the Pss line of /proc/PID/smaps_rollup, in bytes.
func wsPss(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for l := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(l, []byte("Pss:")); ok {
			f := strings.Fields(string(rest))
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no Pss in smaps_rollup")
}

// wsCPUOf is the CPU time (user + system) processes have used.
func wsCPUOf(pids ...int) (time.Duration, error) {
	var sum time.Duration
	for _, pid := range pids {
		d, err := procfs.CPU(pid)
		if err != nil {
			return 0, err
		}
		sum += d
	}
	return sum, nil
}

// wsThreads is the number of threads of process pid.
func wsThreads(pid int) int {
	es, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return len(es)
}
