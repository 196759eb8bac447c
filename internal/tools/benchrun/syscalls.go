package benchrun

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// syscallCounter counts the system calls a process makes, with
// perf stat(1) attached to it and counting the raw_syscalls:sys_enter
// tracepoint (every system call, io_uring_enter(2) included). It needs
// perf and the right to trace the process (root, or perf_event_paranoid
// low enough).
type syscallCounter struct {
	cmd *exec.Cmd
	out string // perf's report file
}

// countSyscalls starts counting the system calls of process pid.
func countSyscalls(pid int) (*syscallCounter, error) {
	f, err := os.CreateTemp("", "galebench-perf-*.csv")
	if err != nil {
		return nil, err
	}
	f.Close()
	cmd := exec.Command("perf", "stat", "-x,", "-e", "raw_syscalls:sys_enter",
		"-p", strconv.Itoa(pid), "-o", f.Name())
	if err := cmd.Start(); err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("syscall count: %w", err)
	}
	time.Sleep(100 * time.Millisecond) // perf attaches to every thread first
	return &syscallCounter{cmd: cmd, out: f.Name()}, nil
}

// stop ends the count and returns it.
func (s *syscallCounter) stop() (int64, error) {
	defer os.Remove(s.out)
	s.cmd.Process.Signal(syscall.SIGINT)
	werr := s.cmd.Wait() // perf writes its count, then dies of the SIGINT
	b, err := os.ReadFile(s.out)
	if err != nil {
		return 0, err
	}
	n, err := parsePerfCount(b)
	if err != nil && werr != nil {
		err = fmt.Errorf("%w (perf: %v)", err, werr)
	}
	return n, err
}

// parsePerfCount reads the count from perf stat's CSV output (-x,), whose
// data line is "COUNT,UNIT,EVENT,...".
func parsePerfCount(b []byte) (int64, error) {
	for _, line := range bytes.Split(b, []byte("\n")) {
		f := bytes.Split(line, []byte(","))
		if len(f) < 3 || !bytes.Equal(f[2], []byte("raw_syscalls:sys_enter")) {
			continue
		}
		n, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("syscall count: perf reported %q", f[0])
		}
		return n, nil
	}
	return 0, errors.New("syscall count: no raw_syscalls:sys_enter line in perf's output")
}
