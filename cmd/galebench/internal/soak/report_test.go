package soak

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testResult is a made-up soak: engine passed, aio lost and corrupted
// bytes, met unexpected errors and leaked a descriptor.
func testResult() *Result {
	r := &Result{
		Meta: Meta{Kind: "meta", Time: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC), Command: "galebench soak -d 10m",
			Seed: 1234, Machine: "Test CPU", CPUs: 2, Kernel: "Linux 6.18", GoVersion: "go1.26", GOMAXPROCS: 2,
			Servers: []string{"aio", "engine"}, Gale: []string{"aio", "engine"},
			Skipped: map[string]string{"engine-io_uring": "io_uring: operation not permitted"},
			Notes:   map[string]string{"aio": "aio's note"}, Duration: 600, Warmup: 10, Conns: 16,
			Every: 1, Stall: 30, Settle: 10, Tolerance: DefaultTolerance},
		Phases: []Phase{{"phase", "warm-up", 0, 10}, {"phase", "baseline", 10, 11}, {"phase", "load", 11, 601}, {"phase", "settle", 601, 602}},
		Totals: []Totals{
			{Server: "aio", Sent: 1000000, Verified: 990000, Corrupted: 10, Lost: 4990, Abandoned: 5000, Messages: 50,
				Opened: 20, Closed: 10, HalfClosed: 5, Reset: 5,
				Expected: map[string]int64{"read after own reset: closed": 5}, Unexpected: map[string]int64{"read: ECONNRESET": 2},
				Corruptions: []Corruption{{Key: 0xabc, Offset: 10373, Bad: 5320, Read: 5344, Shift: -10350, Found: true}, {Key: 0xdef, Bad: 148, Read: 148}}},
			{Server: "engine", Sent: 2000000, Verified: 1999000, Abandoned: 1000, Messages: 80, Opened: 30, Closed: 20, HalfClosed: 5, Reset: 5,
				Expected: map[string]int64{"read after own reset: closed": 5}, Unexpected: map[string]int64{}},
		},
		Checks: []Check{
			{Proc: "aio", Baseline: Level{14, 5, 7 << 20}, End: Level{15, 5, 8 << 20}, Peak: Level{30, 5, 9 << 20},
				Tolerance: DefaultTolerance, NewFDs: map[int]string{20: "socket:[99]"}},
			{Proc: "engine", Baseline: Level{14, 4, 6 << 20}, End: Level{14, 4, 6 << 20}, Peak: Level{30, 4, 7 << 20}, Tolerance: DefaultTolerance, Flat: true},
			{Proc: "client", Baseline: Level{26, 6, 17 << 20}, End: Level{26, 6, 20 << 20}, Peak: Level{90, 135, 21 << 20}, Tolerance: DefaultTolerance, Flat: true},
		},
	}
	for i := range 5 {
		for _, p := range []string{"aio", "engine", "client"} {
			r.Samples = append(r.Samples, Sample{Kind: "sample", T: float64(i), Proc: p, Level: Level{14 + i, 4, 7 << 20}})
		}
	}
	r.Failures = failures(r)
	return r
}

func TestFailures(t *testing.T) {
	got := strings.Join(testResult().Failures, "\n")
	want := strings.Join([]string{
		"aio: 4990 bytes lost",
		"aio: 10 bytes corrupted",
		"aio: 2 unexpected errors (read: ECONNRESET 2)",
		"aio: 15 descriptors at the end against 14 at the baseline (tolerance +0); new: 20 socket:[99]",
	}, "\n")
	if got != want {
		t.Errorf("failures =\n%s\nwant\n%s", got, want)
	}
	if r := (&Result{Totals: []Totals{{Server: "x"}}}); len(failures(r)) != 1 {
		t.Errorf("failures of a server that verified nothing = %q, want one", failures(r))
	}
}

func TestReport(t *testing.T) {
	r := testResult()
	md := renderReport(r)
	for _, want := range []string{
		"galebench soak -d 10m",
		"| seed | 1234 (re-run the same plans with `-seed 1234`) |",
		"Test CPU, 2 CPUs, Linux 6.18, go1.26, GOMAXPROCS 2",
		"aio, engine: each a child process, all soaked at once, each for the whole 10m0s (a 10s warm-up, the idle baseline, 9m50s of load)",
		"| skipped | engine-io_uring: io_uring: operation not permitted |",
		"descriptors +0, goroutines +2",
		"**FAIL**:\n\n- aio: 4990 bytes lost\n",
		"| aio | 1,000,000 | 990,000 | 10 | 4,990 | 5,000 | 50 | 20 | 10 | 5 | 5 | 2 | 5 |",
		"| aio | read: ECONNRESET | unexpected | 2 |",
		"| engine | read after own reset: closed | expected | 5 |",
		"| aio | 14 → 15 (30) | 5 → 5 (5) | 7 MiB → 8 MiB (9 MiB) | **no** |",
		"| client | 26 → 26 (90) | 6 → 6 (135) | 17 MiB → 20 MiB (21 MiB) | yes |",
		"| aio | 0xabc | 10,373 | 5,320 of 5,344 | the stream's bytes at -10350 |",
		"| aio | 0xdef | 0 | 148 of 148 | not found within ±4 MiB of the stream: another stream's bytes, or none |",
		"![open descriptors per process](fds.svg)",
		"![goroutines per process](goroutines.svg)",
		"![resident memory per process](rss.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	r.Failures = nil
	if md := renderReport(r); !strings.Contains(md, "**PASS**") {
		t.Error("report of a passing run lacks **PASS**")
	}
}

// TestWriteReport writes the report and charts: the charts parse as XML
// and hold a line per server and one for the client.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	if err := WriteReport(dir, testResult()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"fds.svg", "goroutines.svg", "rss.svg"} {
		if n := countElements(t, filepath.Join(dir, f), "polyline"); n != 3 {
			t.Errorf("%s has %d lines, want 3 (aio, engine, client)", f, n)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Error(err)
	}
}

// countElements parses an XML file strictly and counts the elements
// called name.
func countElements(t *testing.T, path, name string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	dec := xml.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == name {
			n++
		}
	}
}

// readKinds returns the "kind" of each line of a JSON-lines file.
func readKinds(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var kinds []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v struct{ Kind string }
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v in %q", path, err, sc.Text())
		}
		kinds = append(kinds, v.Kind)
	}
	return kinds
}
