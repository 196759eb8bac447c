// Package procfs reads what the benchmark and soak commands report about a
// process from Linux's /proc (proc(5)): CPU time, resident memory, open
// descriptors, and the machine's CPU model and kernel. Elsewhere every
// reader returns an error (or "unknown").
//
// It is for the measuring programs (internal/tools/benchrun,
// cmd/galebench's soak), not for the library.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of utime and stime in /proc/PID/stat: 100
// on every Linux architecture Go supports (proc(5)).
const clockTick = 100

// CPU returns the CPU time (user + system) process pid has used.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after it follow
	// the last ')'. utime and stime are fields 14 and 15.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("malformed times in /proc/%d/stat", pid)
	}
	return time.Duration(ut+st) * time.Second / clockTick, nil
}

// PeakRSS returns the peak resident set (VmHWM) of process pid in bytes.
func PeakRSS(pid int) (int64, error) {
	return status(pid, "VmHWM:")
}

// CtxSwitches returns the context switches, voluntary and not, of every
// thread of process pid, from /proc/PID/task/*/status (a process's own
// status counts its first thread only). A thread that ends while it is
// read, or ended before, is left out.
func CtxSwitches(pid int) (int64, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var n int64
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, t.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			for _, key := range [...]string{"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"} {
				if rest, ok := strings.CutPrefix(line, key); ok {
					k, _ := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
					n += k
				}
			}
		}
	}
	return n, nil
}

// RSS returns the resident set (VmRSS) of process pid in bytes.
func RSS(pid int) (int64, error) {
	return status(pid, "VmRSS:")
}

func status(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				break
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}

// FDs returns process pid's open descriptors with their readlink targets
// (socket:[inode], pipe:[inode], anon_inode:[eventfd], a path), from
// /proc/PID/fd. A descriptor that closes while it is read is left out,
// and so is the one this reading opens when pid is the caller's own.
func FDs(pid int) (map[int]string, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fds := make(map[int]string, len(entries))
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink(dir + "/" + e.Name()); err == nil {
			fds[n] = target // ReadDir's own descriptor is closed by now: skipped
		}
	}
	return fds, nil
}

// CPUModel returns the CPU's model name from /proc/cpuinfo.
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Kernel returns the kernel's name and release, such as "Linux 6.18.0".
func Kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown"
	}
	return "Linux " + strings.TrimSpace(string(b))
}
