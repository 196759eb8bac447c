package benchrun

import (
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParsePerfCount(t *testing.T) {
	out := "# started on Sat Nov 21 09:00:00 2026\n\n103346,,raw_syscalls:sys_enter,2001234567,100.00,,\n"
	if n, err := parsePerfCount([]byte(out)); err != nil || n != 103346 {
		t.Errorf("parsePerfCount = %d, %v, want 103346", n, err)
	}
	if _, err := parsePerfCount([]byte("<not supported>,,raw_syscalls:sys_enter,0,0.00,,\n")); err == nil {
		t.Error("parsePerfCount accepted <not supported>")
	}
	if _, err := parsePerfCount(nil); err == nil {
		t.Error("parsePerfCount accepted empty output")
	}
}

// TestSyscallsLine: counted system calls reach the headline under the
// ping-pong case.
func TestSyscallsLine(t *testing.T) {
	c := Case{Scenario: "pingpong", Conns: 50, Size: 4}
	meta := Meta{Servers: []string{"engine"}, Gale: []string{"engine"}}
	recs := []Record{{Kind: "run", Case: c, Server: "engine", Value: 100, Msgs: 1000, ServerCPU: 0.01, Syscalls: 500}}
	rows := Summarize(meta, recs)
	if got := rows[0].SyscallsPerMsg; got != 0.5 {
		t.Fatalf("SyscallsPerMsg = %v, want 0.5", got)
	}
	v := newReportView(meta, rows)
	md := string(v.markdown(v.charts()))
	if !strings.Contains(md, "| same, server system calls/msg ↓ | 0.50 |") {
		t.Errorf("report lacks the system calls line:\n%s", md)
	}
}

// TestCountSyscalls counts a real process's system calls, where perf can.
func TestCountSyscalls(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("perf is Linux's")
	}
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	// The shell itself opens and closes /dev/null for each redirection.
	cmd := exec.Command("sh", "-c", "sleep 0.3; for i in 1 2 3 4 5 6 7 8; do : </dev/null; done; sleep 1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	sc, err := countSyscalls(cmd.Process.Pid)
	if err != nil {
		t.Skipf("perf cannot count here: %v", err)
	}
	time.Sleep(600 * time.Millisecond)
	n, err := sc.stop()
	if err != nil {
		t.Skipf("perf cannot count here: %v", err)
	}
	if n <= 0 {
		t.Errorf("count = %d, want some: sleep(1) makes system calls", n)
	}
}
