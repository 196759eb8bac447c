package benchrun

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Meta describes a run of the suite: the first line of results.jsonl.
type Meta struct {
	Kind       string            `json:"kind"` // "meta"
	Time       time.Time         `json:"time"`
	Command    string            `json:"command"`
	Machine    string            `json:"machine"` // CPU model
	CPUs       int               `json:"cpus"`
	Kernel     string            `json:"kernel"`
	GoVersion  string            `json:"go"`
	GOMAXPROCS string            `json:"gomaxprocs"`
	Duration   string            `json:"duration"` // of each measurement
	Reps       int               `json:"reps"`
	Pin        bool              `json:"pin"`
	Wine       string            `json:"wine,omitempty"` // the servers ran under Wine: its version
	Servers    []string          `json:"servers"`
	Gale       []string          `json:"gale"`  // which servers are gale's
	Notes      map[string]string `json:"notes"` // server: how it is written
}

// Record is one measurement: one case on one server, one repetition.
type Record struct {
	Kind      string    `json:"kind"` // "run"
	Time      time.Time `json:"time"`
	Case      Case      `json:"case"`
	Server    string    `json:"server"`
	Rep       int       `json:"rep"`
	Value     float64   `json:"value"` // the headline figure, in Case.Unit
	Unit      string    `json:"unit"`
	Msgs      int64     `json:"msgs"`  // messages echoed (conns for idle)
	Bytes     int64     `json:"bytes"` // bytes echoed and verified; for HTTP, request or response body bytes
	Seconds   float64   `json:"seconds"`
	ServerCPU float64   `json:"server_cpu_s"`
	ClientCPU float64   `json:"client_cpu_s"`
	PeakRSS   int64     `json:"server_peak_rss"` // bytes
	P50       float64   `json:"p50_us,omitempty"`
	P99       float64   `json:"p99_us,omitempty"`
	P999      float64   `json:"p999_us,omitempty"`
	Syscalls  int64     `json:"server_syscalls,omitempty"` // with -syscalls
	// CtxSwitches are the server's context switches (every thread's,
	// voluntary and not), counted with -syscalls.
	CtxSwitches int64 `json:"server_ctxsw,omitempty"`
	// TLS is what a TLS server's handshake with the clients chose:
	// version, key exchange, cipher suite.
	TLS string `json:"tls,omitempty"`
	// Err says why the measurement failed; the other figures are then
	// meaningless and Summarize skips the record.
	Err string `json:"error,omitempty"`
}

// Row summarizes one case on one server over its repetitions.
type Row struct {
	Case             Case
	Server           string
	Gale             bool      // gale's own server
	Values           []float64 // the headline figure of each repetition
	Median, Min, Max float64
	// Ratio is the median against the reference's (Case.Reference: std
	// net's, or std-tls's), oriented so that > 1 is better; 0 when the
	// reference was not measured.
	Ratio           float64
	CPUPerMsg       float64 // server CPU µs per message, median
	CPUMin, CPUMax  float64 // its spread over the repetitions
	ClientCPUPerMsg float64 // load generator CPU µs per message, median
	PeakRSS         int64   // server peak resident set, bytes, max over reps
	P50, P99, P999  float64 // latency µs, medians; 0 when not measured
	SyscallsPerMsg  float64 // server system calls per message, median; 0 when not counted
	CtxSwPerMsg     float64 // server context switches per message, median; 0 when not counted
	TLS             string  // what the TLS handshake chose, from the first repetition
}

// Summarize groups records by case and server, in the order they first
// appear, and computes medians and ratios to each case's reference.
func Summarize(meta Meta, recs []Record) []Row {
	type key struct {
		c   Case
		srv string
	}
	var order []key
	groups := map[key][]Record{}
	for _, r := range recs {
		if r.Err != "" {
			continue
		}
		k := key{r.Case, r.Server}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	rows := make([]Row, 0, len(order))
	for _, k := range order {
		rows = append(rows, summarizeOne(k.c, k.srv, slices.Contains(meta.Gale, k.srv), groups[k]))
	}
	for i := range rows {
		for _, b := range rows {
			if b.Server == b.Case.Reference() && b.Case == rows[i].Case && b.Median > 0 && rows[i].Median > 0 {
				rows[i].Ratio = b.Median / rows[i].Median
				if !rows[i].Case.LowerIsBetter() {
					rows[i].Ratio = rows[i].Median / b.Median
				}
			}
		}
	}
	return rows
}

func summarizeOne(c Case, srv string, gale bool, rs []Record) Row {
	r := Row{Case: c, Server: srv, Gale: gale}
	var cpu, ccpu, p50, p99, p999, sys, sw []float64
	for _, x := range rs {
		r.Values = append(r.Values, x.Value)
		msgs := float64(max(x.Msgs, 1))
		cpu = append(cpu, x.ServerCPU*1e6/msgs)
		ccpu = append(ccpu, x.ClientCPU*1e6/msgs)
		r.PeakRSS = max(r.PeakRSS, x.PeakRSS)
		r.TLS = cmp.Or(r.TLS, x.TLS)
		if x.Syscalls > 0 {
			sys = append(sys, float64(x.Syscalls)/msgs)
			sw = append(sw, float64(x.CtxSwitches)/msgs)
		}
		if x.P50 > 0 {
			p50, p99, p999 = append(p50, x.P50), append(p99, x.P99), append(p999, x.P999)
		}
	}
	r.Median, r.Min, r.Max = median(r.Values), slices.Min(r.Values), slices.Max(r.Values)
	r.CPUPerMsg, r.ClientCPUPerMsg = median(cpu), median(ccpu)
	if len(cpu) > 0 {
		r.CPUMin, r.CPUMax = slices.Min(cpu), slices.Max(cpu)
	}
	r.P50, r.P99, r.P999 = median(p50), median(p99), median(p999)
	r.SyscallsPerMsg, r.CtxSwPerMsg = median(sys), median(sw)
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

// writeJSON writes v as one line.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ReadResults reads a results.jsonl file: its meta line and its records.
func ReadResults(path string) (Meta, []Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return Meta{}, nil, err
	}
	defer f.Close()
	var meta Meta
	var recs []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		var kind struct{ Kind string }
		if err := json.Unmarshal(sc.Bytes(), &kind); err != nil {
			return meta, nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		var err error
		switch kind.Kind {
		case "meta":
			err = json.Unmarshal(sc.Bytes(), &meta)
		case "run":
			var r Record
			err = json.Unmarshal(sc.Bytes(), &r)
			recs = append(recs, r)
		default:
			err = fmt.Errorf("unknown kind %q", kind.Kind)
		}
		if err != nil {
			return meta, nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	return meta, recs, sc.Err()
}
