package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// wsSummary is the Markdown table of runs: per library, the median of its
// successful runs and, in brackets, their range.
func wsSummary(mode string, runs []wsRun) string {
	var libs []string
	by := map[string][]wsRun{}
	fails := map[string][]string{}
	noisy := map[string]int{}
	for _, r := range runs {
		if !slices.Contains(libs, r.Lib) {
			libs = append(libs, r.Lib)
		}
		switch {
		case r.Noisy:
			noisy[r.Lib]++
			continue
		case r.Err != "":
			fails[r.Lib] = append(fails[r.Lib], fmt.Sprintf("rep %d: %s", r.Rep, r.Err))
		case r.Conns < r.Want:
			fails[r.Lib] = append(fails[r.Lib], fmt.Sprintf("rep %d: %d of %d connections (%s)", r.Rep, r.Conns, r.Want, r.FirstError))
		case r.Bad > 0 || r.Lost > 0:
			fails[r.Lib] = append(fails[r.Lib], fmt.Sprintf("rep %d: %d bad, %d lost echoes (%s)", r.Rep, r.Bad, r.Lost, r.FirstError))
		default:
			by[r.Lib] = append(by[r.Lib], r)
		}
	}
	var b strings.Builder
	f := medianRange[wsRun] // the median and range of a column
	switch mode {
	case "idle":
		fmt.Fprintf(&b, "| server | runs | conns | bytes/conn, Pss ↓ | bytes/conn, RSS ↓ | server Pss loaded, MB | threads |\n|---|---|---|---|---|---|---|\n")
		for _, l := range libs {
			rs := by[l]
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", l, len(rs),
				f(rs, func(r wsRun) float64 { return float64(r.Conns) }, 0),
				f(rs, func(r wsRun) float64 { return r.BytesPerConn }, 0),
				f(rs, func(r wsRun) float64 { return r.RSSPerConn }, 0),
				f(rs, func(r wsRun) float64 { return float64(r.Loaded.Pss) / 1e6 }, 1),
				f(rs, func(r wsRun) float64 { return float64(r.Threads) }, 0))
		}
	case "echo":
		fmt.Fprintf(&b, "| server | runs | msg/s ↑ | server CPU µs/msg ↓ | server CPU %% | EER (msg/s per CPU %%) ↑ | p50 µs | p99 µs | server Pss after, MB | client CPU %% |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for _, l := range libs {
			rs := by[l]
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", l, len(rs),
				f(rs, func(r wsRun) float64 { return r.TPS }, 0),
				f(rs, func(r wsRun) float64 { return r.CPUPerMsgUs }, 2),
				f(rs, func(r wsRun) float64 { return r.CPUPct }, 0),
				f(rs, func(r wsRun) float64 { return r.EER }, 0),
				f(rs, func(r wsRun) float64 { return r.P50us }, 0),
				f(rs, func(r wsRun) float64 { return r.P99us }, 0),
				f(rs, func(r wsRun) float64 { return float64(r.After.Pss) / 1e6 }, 1),
				f(rs, func(r wsRun) float64 { return r.ClientCPUPct }, 0))
		}
	}
	for _, l := range libs {
		if noisy[l] > 0 {
			fmt.Fprintf(&b, "\n- %s: %d noisy run(s) left out (the machine was busy)", l, noisy[l])
		}
		for _, e := range fails[l] {
			fmt.Fprintf(&b, "\n- %s failed: %s", l, e)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// wsNum formats x with prec decimals and thousands separators.
func wsNum(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var out []byte
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, intPart[i])
	}
	s = string(out)
	if neg {
		s = "-" + s
	}
	if frac != "" {
		s += "." + frac
	}
	return s
}

// wsWaitQuiet waits, at most max, until less than busy of the machine's
// CPU time goes to anything (this process's children are stopped by
// then), and returns the last share seen.
func wsWaitQuiet(busy float64, maxWait time.Duration) float64 {
	if busy >= 1 {
		return 0 // not asked
	}
	deadline := time.Now().Add(maxWait)
	for {
		b := wsBusy(time.Second)
		if b < busy || time.Now().After(deadline) {
			if b >= busy {
				fmt.Fprintf(os.Stderr, "bench: the machine is %.0f%% busy; running anyway\n", 100*b)
			}
			return b
		}
		time.Sleep(2 * time.Second)
	}
}

// wsCPUStat is one CPU's line of /proc/stat: its busy and softirq times
// and the total, in ticks.
type wsCPUStat struct{ busy, softirq, irq, total float64 }

// wsCPUStats reads every CPU's line of /proc/stat ("cpu0", "cpu1"...).
func wsCPUStats() map[string]wsCPUStat {
	m := map[string]wsCPUStat{}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var st wsCPUStat
		for i, x := range f[1:9] { // user nice system idle iowait irq softirq steal
			v, _ := strconv.ParseFloat(x, 64)
			st.total += v
			if i != 3 && i != 4 {
				st.busy += v
			}
			if i == 5 {
				st.irq = v
			}
			if i == 6 {
				st.softirq = v
			}
		}
		m[f[0]] = st
	}
	return m
}

// wsCPUShares is each CPU's busy share between two readings, and its
// softirq share, as "cpu0 98% (softirq 21%), cpu1 ...".
func wsCPUShares(a, b map[string]wsCPUStat) string {
	var parts []string
	for i := 0; ; i++ {
		k := "cpu" + strconv.Itoa(i)
		x, ok1 := a[k]
		y, ok2 := b[k]
		if !ok1 || !ok2 {
			break
		}
		t := y.total - x.total
		if t <= 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.0f%% (softirq %.0f%%)", k, 100*(y.busy-x.busy)/t, 100*(y.softirq-x.softirq)/t))
	}
	return strings.Join(parts, ", ")
}

// wsForeign is the CPU time, in percent of one CPU, that went to other
// than the processes measured (whose CPU percent is ours) between two
// readings wall seconds apart: other programs' load. (The softirq time
// spent in the processes' context is charged to them, here; what
// ksoftirqd does is foreign, a few percent.)
func wsForeign(a, b map[string]wsCPUStat, wall, ours float64) float64 {
	var ticks float64
	for k, y := range b {
		if x, ok := a[k]; ok {
			ticks += y.busy - x.busy
		}
	}
	return ticks/wall - ours // USER_HZ is 100 ticks a second
}

// wsBusy is the share of all CPUs' time not idle during d, from /proc/stat.
func wsBusy(d time.Duration) float64 {
	read := func() (idle, total float64) {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return 0, 0
		}
		line, _, _ := strings.Cut(string(b), "\n")
		for i, f := range strings.Fields(line)[1:] {
			v, _ := strconv.ParseFloat(f, 64)
			if i >= 8 { // guest times are counted in user already
				break
			}
			total += v
			if i == 3 || i == 4 { // idle, iowait
				idle += v
			}
		}
		return idle, total
	}
	i0, t0 := read()
	time.Sleep(d)
	i1, t1 := read()
	if t1 <= t0 {
		return 0
	}
	return 1 - (i1-i0)/(t1-t0)
}
