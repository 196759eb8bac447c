package benchrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/galeio/gale/internal/tools/procfs"
)

// Run measures every case on every chosen server, o.Reps times,
// interleaving the servers so that drifts in machine load hit them alike,
// and prints the table. With o.Out it also writes results.jsonl (as it
// goes), report.md and the charts. A failed measurement is recorded, the
// server skips the rest of that case, and Run returns an error naming
// every failure once the suite is done.
func Run(all []Server, o Options) error {
	chosen := make([]Server, 0, len(o.Servers))
	for _, name := range o.Servers {
		s, err := find(all, name)
		if err != nil {
			return err
		}
		chosen = append(chosen, s)
	}
	if len(o.Cases) == 0 {
		return errNoCases
	}
	if err := matchKinds(chosen, o.Cases); err != nil {
		return err
	}
	if slices.ContainsFunc(chosen, Server.TLS) {
		files, dir, err := writeKeyFiles()
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		o.tls = files
	}
	if o.Pin {
		if err := pinClient(); err != nil {
			return err
		}
	}
	meta := newMeta(o, chosen)
	sink, err := openSink(o.Out, meta)
	if err != nil {
		return err
	}
	defer sink.close()
	fmt.Printf("%s: %d repetition(s) of %v per case and server, loopback, GOMAXPROCS=%s\n",
		commandName(o.Command), o.Reps, o.Duration, meta.GOMAXPROCS)
	recs, failures := runAll(chosen, o, sink)
	rows := Summarize(meta, recs)
	printTable(os.Stdout, meta, rows)
	if o.Out != "" {
		if err := sink.close(); err != nil {
			return err
		}
		if err := WriteReport(o.Out, meta, rows); err != nil {
			return err
		}
		fmt.Printf("results, report and charts in %s\n", o.Out)
	}
	return errors.Join(failures...)
}

// matchKinds checks that every case has a server of its kind (plain,
// TLS or HTTP) and every server a case.
func matchKinds(servers []Server, cases []Case) error {
	for _, c := range cases {
		if len(serversFor(servers, c)) == 0 {
			return fmt.Errorf("no chosen server runs %s: the %s scenarios run on %s servers alone", c.Key(), c.kind(), c.kind())
		}
	}
	for _, s := range servers {
		if !slices.ContainsFunc(cases, func(c Case) bool { return c.kind() == s.kind() }) {
			return fmt.Errorf("server %s runs none of the chosen scenarios: it runs the %s ones alone", s.Name, s.kind())
		}
	}
	return nil
}

// serversFor returns the servers that run case c: those of its kind.
func serversFor(servers []Server, c Case) []Server {
	var out []Server
	for _, s := range servers {
		if s.kind() == c.kind() {
			out = append(out, s)
		}
	}
	return out
}

// runAll is Run's loop: every case, every repetition, every server of the
// case's kind.
func runAll(all []Server, o Options, sink *sink) ([]Record, []error) {
	steps := 0
	for _, c := range o.Cases {
		steps += o.Reps * len(serversFor(all, c))
	}
	p := newProgress(o.Progress, steps)
	defer p.done()
	var recs []Record
	var failures []error
	for _, c := range o.Cases {
		failed := map[string]bool{}
		servers := serversFor(all, c)
		for rep := range o.Reps {
			for _, s := range servers {
				if failed[s.Name] {
					p.skip()
					continue
				}
				p.step("%s on %s, run %d/%d", c.Key(), s.Name, rep+1, o.Reps)
				rec := measure(s, c, o)
				rec.Rep = rep + 1
				if rec.Err != "" {
					failed[s.Name] = true
					err := fmt.Errorf("%s on %s, run %d: %s", c.Key(), s.Name, rep+1, rec.Err)
					p.printf("FAILED: %v", err)
					failures = append(failures, err)
				}
				recs = append(recs, rec)
				sink.add(rec)
			}
		}
	}
	return recs, failures
}

// sink appends records to results.jsonl as they are measured, so an
// interrupted run keeps what it measured.
type sink struct {
	f   *os.File
	err error
}

func openSink(dir string, meta Meta) (*sink, error) {
	if dir == "" {
		return &sink{}, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return nil, err
	}
	s := &sink{f: f}
	s.err = writeJSON(f, meta)
	return s, s.err
}

func (s *sink) add(r Record) {
	if s.f != nil && s.err == nil {
		s.err = writeJSON(s.f, r)
	}
}

func (s *sink) close() error {
	if s.f == nil {
		return s.err
	}
	err := errors.Join(s.err, s.f.Close())
	s.f, s.err = nil, err
	return err
}

// Rerender writes report.md and the charts again from dir/results.jsonl.
func Rerender(dir string) error {
	if dir == "" {
		return errors.New("-report needs -out DIR")
	}
	meta, recs, err := ReadResults(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		return err
	}
	rows := Summarize(meta, recs)
	printTable(os.Stdout, meta, rows)
	return WriteReport(dir, meta, rows)
}

func newMeta(o Options, servers []Server) Meta {
	m := Meta{
		Kind: "meta", Time: time.Now().UTC().Truncate(time.Second), Command: o.Command,
		Machine: procfs.CPUModel(), CPUs: runtime.NumCPU(), Kernel: procfs.Kernel(),
		GoVersion: runtime.Version(), GOMAXPROCS: fmt.Sprint(runtime.GOMAXPROCS(0)),
		Duration: o.Duration.String(), Reps: o.Reps, Pin: o.Pin,
		Notes: map[string]string{},
	}
	if o.Wine != "" {
		m.Wine = wineVersion()
	}
	for _, s := range servers {
		m.Servers = append(m.Servers, s.Name)
		if s.Gale {
			m.Gale = append(m.Gale, s.Name)
		}
		if s.Note != "" {
			m.Notes[s.Name] = s.Note
		}
	}
	return m
}

// commandName is the program's name in a command line: its first word.
func commandName(cmdline string) string {
	if f := strings.Fields(cmdline); len(f) > 0 {
		return f[0]
	}
	return "galebench"
}
