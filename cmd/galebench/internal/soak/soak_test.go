package soak

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// The soak from end to end: briefly against the engine server on each
// backend (the child inherits GALE_BACKEND), and against a faulty server
// that it must fail.

// shortSoak is a soak of d against servers, writing into a temporary
// directory.
func shortSoak(t *testing.T, d time.Duration, servers ...string) Options {
	return Options{Duration: d, Servers: servers, Explicit: true, Conns: 8, Seed: 1,
		Every: 250 * time.Millisecond, Stall: 20 * time.Second, Settle: 5 * time.Second,
		Tolerance: DefaultTolerance, Out: t.TempDir(), Command: "soak.test"}
}

func TestSoak(t *testing.T) { backendtest.Run(t, testSoak) }

func testSoak(t *testing.T) {
	o := shortSoak(t, 3*time.Second, "engine")
	r, err := Run(testServers(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Pass() {
		t.Fatalf("soak failed: %q", r.Failures)
	}
	tt := r.Totals[0]
	if tt.Verified == 0 || tt.Messages == 0 || tt.Sent != tt.Verified+tt.Abandoned {
		t.Errorf("sent %d, verified %d, abandoned %d, %d messages: want sent = verified + abandoned > 0",
			tt.Sent, tt.Verified, tt.Abandoned, tt.Messages)
	}
	if tt.Opened == 0 || tt.Opened != tt.Closed+tt.HalfClosed+tt.Reset {
		t.Errorf("opened %d, closed %d, half-closed %d, reset %d: want every connection ended once",
			tt.Opened, tt.Closed, tt.HalfClosed, tt.Reset)
	}
	if len(r.Checks) != 2 || r.Checks[0].Proc != "engine" || r.Checks[0].Peak.FDs <= r.Checks[0].Baseline.FDs {
		t.Errorf("checks %+v: want engine's and the client's, the server's descriptors up during the load", r.Checks)
	}
	if names := phaseNames(r.Phases); names != "warm-up,baseline,load,settle" {
		t.Errorf("phases %s, want warm-up,baseline,load,settle", names)
	}
	kinds := readKinds(t, filepath.Join(o.Out, "soak.jsonl"))
	if len(kinds) < 10 || kinds[0] != "meta" || kinds[len(kinds)-1] != "verdict" || !slices.Contains(kinds, "sample") || !slices.Contains(kinds, "totals") {
		t.Errorf("soak.jsonl holds %v: want the meta, samples, totals, and the verdict last", kinds)
	}
	for _, f := range []string{"report.md", "fds.svg", "goroutines.svg", "rss.svg"} {
		if fi, err := os.Stat(filepath.Join(o.Out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, want it written", f, err)
		}
	}
}

func phaseNames(ps []Phase) string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return strings.Join(names, ",")
}

// TestSoakFails runs the soak against the faulty server (main_test.go):
// it must report the corrupted bytes and the leaked descriptors and
// goroutines.
func TestSoakFails(t *testing.T) {
	o := shortSoak(t, time.Second, "faulty")
	o.Stall, o.Settle = 500*time.Millisecond, 500*time.Millisecond
	r, err := Run(testServers(), o)
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Join(r.Failures, "\n")
	for _, want := range []string{"faulty: ", "bytes corrupted", "descriptors at the end", "goroutines at the end"} {
		if !strings.Contains(f, want) {
			t.Errorf("failures %q lack %q", r.Failures, want)
		}
	}
	if r.Pass() || r.Checks[1].Proc != "client" || !r.Checks[1].Flat {
		t.Errorf("checks %+v: want the server not flat and the client flat", r.Checks)
	}
	b, err := os.ReadFile(filepath.Join(o.Out, "stacks-faulty.txt"))
	if err != nil || !strings.Contains(string(b), "faultyEcho") {
		t.Errorf("stacks-faulty.txt: %v, want the leaked goroutines' stacks", err)
	}
}

func TestBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Duration: time.Millisecond, Servers: []string{"engine"}, Conns: 1, Every: time.Second, Stall: time.Second, Settle: time.Second},
		{Duration: time.Second, Servers: []string{"nosuch"}, Conns: 1, Every: time.Second, Stall: time.Second, Settle: time.Second},
		{Duration: time.Second, Servers: []string{"engine"}, Conns: 1 << 20, Every: time.Second, Stall: time.Second, Settle: time.Second},
		{Duration: time.Second, Servers: []string{"engine"}, Conns: 0, Every: time.Second, Stall: time.Second, Settle: time.Second},
	} {
		if _, err := Run(testServers(), o); err == nil {
			t.Errorf("Run(%+v) = nil error, want one", o)
		}
	}
}
