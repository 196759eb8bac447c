package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// histogram counts latencies in logarithmic buckets of about 3 % width,
// from 1 µs to about 1 minute.
type histogram struct {
	counts []int64
	n      int64
}

const histBase = 1.03

func newHistogram() *histogram { return &histogram{counts: make([]int64, 640)} }

func (h *histogram) add(d time.Duration) {
	us := max(float64(d)/float64(time.Microsecond), 1)
	i := min(int(math.Log(us)/math.Log(histBase)), len(h.counts)-1)
	h.counts[i]++
	h.n++
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

// quantile returns the upper edge of the bucket holding quantile q, in µs.
func (h *histogram) quantile(q float64) float64 {
	want := int64(math.Ceil(q * float64(h.n)))
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= want && c > 0 {
			return math.Pow(histBase, float64(i+1))
		}
	}
	return 0
}

// row is one scenario on one server, over all repetitions.
type row struct {
	scenario, server string
	unit             string
	values           []float64
	cpuPerMsg        float64 // server CPU µs per message
	clientCPU        float64 // client CPU µs per message
	rss              int64
	p50, p99, p999   float64
	reps             int
}

var units = map[string]string{"stream": "MB/s", "pingpong": "msg/s", "conns": "ms/round", "idle": "B/conn"}

// lowerIsBetter reports whether smaller figures of unit are better.
func lowerIsBetter(unit string) bool { return unit == "ms/round" || unit == "B/conn" }

func summarize(sc, srv string, rs []result) row {
	r := row{scenario: sc, server: srv, unit: units[sc], reps: len(rs)}
	var cpu, ccpu, p50, p99, p999 []float64
	for _, x := range rs {
		r.values = append(r.values, x.value)
		msgs := float64(max(x.msgs, 1))
		cpu = append(cpu, float64(x.serverCPU.Microseconds())/msgs)
		ccpu = append(ccpu, float64(x.clientCPU.Microseconds())/msgs)
		r.rss = max(r.rss, x.serverRSS)
		if x.lat != nil {
			p50 = append(p50, x.lat.quantile(0.50))
			p99 = append(p99, x.lat.quantile(0.99))
			p999 = append(p999, x.lat.quantile(0.999))
		}
	}
	r.cpuPerMsg, r.clientCPU = median(cpu), median(ccpu)
	r.p50, r.p99, r.p999 = median(p50), median(p99), median(p999)
	return r
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// printTable writes the medians, with min–max, the ratio to std net, the
// server's CPU per message (per round for conns) and memory.
func printTable(w io.Writer, rows []row, o options) {
	base := make(map[string]float64)
	for _, r := range rows {
		if r.server == "stdnet" {
			base[r.scenario] = median(r.values)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tserver\tmedian\tunit\tmin–max\tvs stdnet\tsrv CPU µs/msg\tclient CPU µs/msg\tsrv peak RSS\tp50 µs\tp99 µs\tp99.9 µs\t")
	for _, r := range rows {
		m := median(r.values)
		ratio := "-"
		if b := base[r.scenario]; b > 0 && r.server != "stdnet" {
			if lowerIsBetter(r.unit) { // show how many times better
				ratio = fmt.Sprintf("%.2fx", b/m)
			} else {
				ratio = fmt.Sprintf("%.2fx", m/b)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t\n",
			r.scenario, r.server, num(m), r.unit,
			num(slices.Min(r.values))+"–"+num(slices.Max(r.values)), ratio,
			r.cpuPerMsg, r.clientCPU, mib(r.rss), lat(r.p50), lat(r.p99), lat(r.p999))
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d run(s) of %v each per cell, servers interleaved; 'vs stdnet' > 1 means faster.\n", o.reps, o.duration)
	fmt.Fprintf(w, "pingpong: %d conns x %d B; conns: %d conns x 1 KiB per round; stream: 1 conn, 64 KiB writes; idle: %d conns.\n", o.conns, o.size, o.many, o.idle)
	if len(rows) > 0 && !strings.Contains(fmt.Sprint(o.servers), "stdnet") {
		fmt.Fprintln(w, "(add stdnet to -servers for ratios)")
	}
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func lat(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", us)
}
