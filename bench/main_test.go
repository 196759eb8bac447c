package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/galeio/gale/internal/benchrun"
)

// TestMain lets the test binary serve as the suite's server child: Run
// re-executes os.Executable with -serve, as the command does.
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "-serve" {
		benchrun.Main(config())
	}
	os.Exit(m.Run())
}

// TestSuiteSmoke runs every scenario against every peer and std net,
// briefly: each echoed byte is verified, so a broken server fails here
// rather than in a long run.
func TestSuiteSmoke(t *testing.T) {
	cases, err := benchrun.ParseCases("stream,pingpong,conns,idle", "8x4,4x1024", "50", "50")
	if err != nil {
		t.Fatal(err)
	}
	servers := []string{"stdnet"}
	for _, p := range peers {
		servers = append(servers, p.Name)
	}
	dir := t.TempDir()
	o := benchrun.Options{Duration: 300 * time.Millisecond, Reps: 1, Servers: servers, Cases: cases,
		Out: dir, Command: "bench.test"}
	runErr := benchrun.Run(config().Servers, o)
	_, recs, err := benchrun.ReadResults(filepath.Join(dir, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cases) * len(servers); len(recs) != want {
		t.Errorf("results.jsonl holds %d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		switch {
		case r.Err != "" || r.Value <= 0 || r.Msgs <= 0:
			t.Errorf("%s on %s: %+v, want a positive figure and no error", r.Case.Key(), r.Server, r)
		}
	}
	if runErr != nil {
		t.Errorf("Run = %v", runErr)
	}
}
