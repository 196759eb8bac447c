package soak

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/galeio/gale/internal/tools/procfs"
)

// Meta describes the run: the first line of soak.jsonl.
type Meta struct {
	Kind       string    `json:"kind"` // "meta"
	Time       time.Time `json:"time"`
	Command    string    `json:"command"`
	Seed       uint64    `json:"seed"`
	Machine    string    `json:"machine"` // CPU model
	CPUs       int       `json:"cpus"`
	Kernel     string    `json:"kernel"`
	GoVersion  string    `json:"go"`
	GOMAXPROCS int       `json:"gomaxprocs"`
	// Backend is GALE_BACKEND's value, if set: it overrides every
	// server's backend.
	Backend  string            `json:"gale_backend,omitempty"`
	Servers  []string          `json:"servers"`
	Gale     []string          `json:"gale"`              // which servers are gale's
	Skipped  map[string]string `json:"skipped,omitempty"` // server: why it was not run
	Notes    map[string]string `json:"notes"`             // server: how it is written
	Duration float64           `json:"duration_s"`        // of the load, warm-up included
	Warmup   float64           `json:"warmup_s"`
	Conns    int               `json:"conns"` // client connections per server at a time
	Every    float64           `json:"every_s"`
	Stall    float64           `json:"stall_s"`
	Settle   float64           `json:"settle_s"`
	// Tolerance is how far above the baseline a process may end.
	Tolerance Tolerance `json:"tolerance"`
}

// Phase is a stretch of the run, in seconds since its start.
type Phase struct {
	Kind  string  `json:"kind"` // "phase"
	Name  string  `json:"name"`
	Start float64 `json:"start"`
	End   float64 `json:"end"`
}

// Verdict is the last line of soak.jsonl.
type Verdict struct {
	Kind     string   `json:"kind"` // "verdict"
	Pass     bool     `json:"pass"`
	Failures []string `json:"failures"`
}

// sink appends records to soak.jsonl as the run makes them, so that an
// interrupted run keeps its samples; safe from any goroutine. A sink
// with no directory drops everything.
type sink struct {
	mu  sync.Mutex
	f   *os.File
	err error
}

func openSink(dir string) (*sink, error) {
	if dir == "" {
		return &sink{}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "soak.jsonl"))
	if err != nil {
		return nil, err
	}
	return &sink{f: f}, nil
}

// add writes v as one JSON line.
func (s *sink) add(v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil && s.err == nil {
		s.err = writeJSON(s.f, v)
	}
}

func (s *sink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	err := errors.Join(s.err, s.f.Close())
	s.f, s.err = nil, err
	return err
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// newMeta describes the run about to start.
func newMeta(o Options, servers []benchrun.Server, skipped map[string]string) Meta {
	m := Meta{
		Kind: "meta", Time: time.Now().UTC().Truncate(time.Second), Command: o.Command, Seed: o.Seed,
		Machine: procfs.CPUModel(), CPUs: runtime.NumCPU(), Kernel: procfs.Kernel(),
		GoVersion: runtime.Version(), GOMAXPROCS: runtime.GOMAXPROCS(0), Backend: os.Getenv(poller.EnvBackend),
		Skipped: skipped, Notes: map[string]string{},
		Duration: o.Duration.Seconds(), Warmup: warmupFor(o.Duration).Seconds(), Conns: o.Conns,
		Every: o.Every.Seconds(), Stall: o.Stall.Seconds(), Settle: o.Settle.Seconds(), Tolerance: o.Tolerance,
	}
	for _, s := range servers {
		m.Servers = append(m.Servers, s.Name)
		if s.Gale {
			m.Gale = append(m.Gale, s.Name)
		}
		m.Notes[s.Name] = s.Note
	}
	return m
}
