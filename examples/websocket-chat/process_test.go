package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// buildChat builds the example's program into a temporary directory and
// returns its path. It is built with the race detector when the test is.
func buildChat(ctx context.Context, t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "websocket-chat")
	args := []string{"build", "-o", bin}
	if raceEnabled() {
		args = append(args, "-race")
	}
	out, err := exec.CommandContext(ctx, "go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// raceEnabled reports whether the test runs with the race detector.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(info.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
}

// chatProcess is the example's program, run by a test.
type chatProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	log    string // its output's file
	addr   string // where it listens
	exited chan struct{}
}

var listening = regexp.MustCompile(`listening on http://([^/\s]+)/`)

// startChat runs the program bin on addr (port 0 for a free one), waits
// until it listens, and kills it at the end of the test if it still runs.
func startChat(t *testing.T, bin, addr string) *chatProcess {
	t.Helper()
	logf, err := os.CreateTemp(t.TempDir(), "server*.log")
	if err != nil {
		t.Fatal(err)
	}
	p := &chatProcess{t: t, log: logf.Name(), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "-addr", addr, "-shutdown", "10s")
	p.cmd.Stdout, p.cmd.Stderr = logf, logf // a file: no copying goroutine
	// Built with the race detector, it would wait a second at exit for
	// its reports: they are written at once.
	p.cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
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
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
		p.dumpLog()
	})

	deadline := time.Now().Add(testTimeout)
	for {
		out, _ := os.ReadFile(p.log)
		if m := listening.FindSubmatch(out); m != nil {
			p.addr = string(m[1])
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("the chat server exited (%v) before listening:\n%s", p.cmd.ProcessState, out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chat server is not listening after %v:\n%s", testTimeout, out)
		}
	}
}

// stop sends the program SIGTERM, and checks that it exits with status 0
// within timeout.
func (p *chatProcess) stop(timeout time.Duration) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		p.t.Fatal(err)
	}
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.t.Fatalf("the chat server did not exit within %v of SIGTERM", timeout)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		p.t.Fatalf("the chat server exited with %v after SIGTERM; want status 0", p.cmd.ProcessState)
	}
}

// dumpLog passes the program's output to the test's log.
func (p *chatProcess) dumpLog() {
	out, _ := os.ReadFile(p.log)
	p.t.Logf("chat server on %s, pid %d, said:\n%s", p.addr, p.cmd.Process.Pid, bytes.TrimSpace(out))
}

// TestRestart runs the program: SIGTERM closes the clients with 1001
// "server restarting" and exits 0, and a new server on the same address
// takes the clients back.
func TestRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	bin := buildChat(ctx, t)
	e := clientEngine(t)
	p := startChat(t, bin, "127.0.0.1:0")
	ann := join(t, e, p.addr, "ann", "ann")
	ben := join(t, e, p.addr, "ben", "ben", "ann")
	ann.expect(event{Type: "join", Nick: "ben"})

	p.stop(testTimeout)
	ann.expectClose(websocket.StatusGoingAway, reasonRestart)
	ben.expectClose(websocket.StatusGoingAway, reasonRestart)
	out, _ := os.ReadFile(p.log)
	if !bytes.Contains(out, []byte("bye")) {
		t.Errorf("the server did not end its shutdown:\n%s", out)
	}

	p = startChat(t, bin, p.addr)
	ann = join(t, e, p.addr, "ann", "ann")
	ben = join(t, e, p.addr, "ben", "ben", "ann")
	ann.expect(event{Type: "join", Nick: "ben"})
	ben.send(event{Type: "msg", Text: "back"})
	ann.expect(event{Type: "msg", Nick: "ben", Text: "back"})
	ben.expect(event{Type: "msg", Nick: "ben", Text: "back"})
	p.stop(testTimeout)
}
