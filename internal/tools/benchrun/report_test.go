package benchrun

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testFigures are the medians of the synthetic run: case key, then per
// server median, server CPU µs/msg and p99 µs. gnet has no conns-19000
// row, as when a server fails at that many connections.
var testFigures = []struct {
	c    Case
	figs map[string][3]float64
}{
	{Case{Scenario: "stream", Conns: 1, Size: streamChunk}, map[string][3]float64{
		"aio": {1700, 30, 0}, "engine": {1512, 31, 0}, "stdnet": {1636, 32, 0},
		"cepoll": {1599, 29, 0}, "gaio": {1468, 40, 0}, "gnet": {1571, 33, 0}}},
	{Case{Scenario: "pingpong", Conns: 50, Size: 4}, map[string][3]float64{
		"aio": {150000, 7.0, 3000}, "engine": {140000, 7.5, 3100}, "stdnet": {131600, 7.2, 4227},
		"cepoll": {122200, 7.13, 4293}, "gaio": {89000, 9.25, 1597}, "gnet": {130000, 7.22, 4145}}},
	{Case{Scenario: "pingpong", Conns: 1000, Size: 1024}, map[string][3]float64{
		"aio": {140000, 8, 20000}, "engine": {120000, 9, 21000}, "stdnet": {96000, 10, 27918},
		"cepoll": {111900, 8.5, 19530}, "gaio": {89400, 11, 31064}, "gnet": {119600, 9.5, 19268}}},
	{Case{Scenario: "conns", Conns: 1000, Size: connsSize}, map[string][3]float64{
		"aio": {15.7, 20, 0}, "engine": {16.2, 21, 0}, "stdnet": {15.8, 22, 0},
		"cepoll": {14, 18, 0}, "gaio": {17, 25, 0}, "gnet": {15, 19, 0}}},
	{Case{Scenario: "conns", Conns: 8192, Size: connsSize}, map[string][3]float64{
		"aio": {95, 20, 0}, "engine": {105, 21, 0}, "stdnet": {123, 22, 0},
		"cepoll": {80, 18, 0}, "gaio": {138, 25, 0}, "gnet": {111, 19, 0}}},
	{Case{Scenario: "conns", Conns: 19000, Size: connsSize}, map[string][3]float64{
		"aio": {250, 20, 0}, "engine": {260, 21, 0}, "stdnet": {300, 22, 0},
		"cepoll": {200, 18, 0}, "gaio": {320, 25, 0}}},
	{Case{Scenario: "idle", Conns: 10000, Size: 1}, map[string][3]float64{
		"aio": {1580, 0, 0}, "engine": {1198, 0, 0}, "stdnet": {7963, 0, 0},
		"cepoll": {1, 0, 0}, "gaio": {5332, 0, 0}, "gnet": {539, 0, 0}}},
	{Case{Scenario: "idle", Conns: 19000, Size: 1}, map[string][3]float64{
		"aio": {240, 0, 0}, "engine": {300, 0, 0}, "stdnet": {8000, 0, 0},
		"cepoll": {2, 0, 0}, "gaio": {5400, 0, 0}, "gnet": {540, 0, 0}}},
}

// testMeta describes the synthetic run.
func testMeta() Meta {
	return Meta{
		Kind: "meta", Time: time.Date(2026, 11, 21, 9, 5, 0, 0, time.FixedZone("X", 3600)),
		Command: "galebench -full -out results", Machine: "AMD EPYC 7B13", CPUs: 2,
		Kernel: "Linux 6.18.0", GoVersion: "go1.26.8", GOMAXPROCS: "2", Duration: "4s", Reps: 3,
		Servers: []string{"aio", "engine", "stdnet", "cepoll", "gaio", "gnet"},
		Gale:    []string{"aio", "engine"},
		Notes:   map[string]string{"gnet": "gnet v2 OnTraffic echo", "aio": "gale aio, swap buffer", "cepoll": "C, epoll LT"},
	}
}

// testRecords returns three interleaved repetitions of testFigures at
// 0.95, 1 and 1.05 times each median.
func testRecords(meta Meta) []Record {
	var recs []Record
	for rep, k := range []float64{0.95, 1, 1.05} {
		for _, tf := range testFigures {
			for _, srv := range meta.Servers {
				f, ok := tf.figs[srv]
				if !ok {
					continue
				}
				msgs := int64(1e6)
				recs = append(recs, Record{Kind: "run", Case: tf.c, Server: srv, Rep: rep, Value: f[0] * k,
					Unit: tf.c.Unit(), Msgs: msgs, Seconds: 4, ServerCPU: f[1], ClientCPU: 2 * f[1],
					PeakRSS: 5 << 20, P50: f[2] / 10, P99: f[2], P999: f[2] * 2})
			}
		}
	}
	return recs
}

// testRows summarizes the synthetic run.
func testRows() (Meta, []Row) {
	meta := testMeta()
	return meta, Summarize(meta, testRecords(meta))
}

func TestWriteReportHeadline(t *testing.T) {
	meta, rows := testRows()
	dir := t.TempDir()
	if err := WriteReport(dir, meta, rows); err != nil {
		t.Fatalf("WriteReport = %v", err)
	}
	md := readFile(t, filepath.Join(dir, "report.md"))
	for _, want := range []string{
		"- **Date:** 2026-11-21 08:05 UTC\n",
		"AMD EPYC 7B13, 2 cores, Linux 6.18.0, go1.26.8, GOMAXPROCS=2",
		"4s per measurement, 3 repetitions, pinned: no",
		"```\ngalebench -full -out results\n```",
		"medians of interleaved repetitions; min–max in brackets",
		"every figure whose min–max overlaps the best's: level with it",
		"| scenario | aio | engine | stdnet | cepoll | gaio | gnet |\n",
		// ±5 % across the repetitions: the figures within it are level.
		"| stream: 1 conn, 64 KiB writes echoed, MB/s ↑ | **1,700** | 1,512 | **1,636** | **1,599** | 1,468 | **1,571** |\n",
		"| pingpong: 50 conns × 4 B, closed loop, msg/s ↑ | **150.0k** | **140.0k** | 131.6k | 122.2k | 89.0k | 130.0k |\n",
		"| same, server CPU µs/msg ↓ | **7.00** | 7.50 | 7.20 | 7.13 | 9.25 | 7.22 |\n",
		"| same, p99 latency µs ↓ | 3,000 | 3,100 | 4,227 | 4,293 | **1,597** | 4,145 |\n",
		"| conns: 19,000 conns each echo 1 KiB per round, ms/round ↓ | 250.0 | 260.0 | 300.0 | **200.0** | 320.0 | - |\n",
		"| same, server CPU µs per echo ↓ | 20.0 | 21.0 | 22.0 | **18.0** | 25.0 | - |\n",
		"| idle: 19,000 idle conns, B/conn ↓ | 240 | 300 | 8,000 | **2** | 5,400 | 540 |\n",
		"![stream](stream.svg)", "![pingpong-50x4](pingpong-50x4.svg)", "![conns-scaling](conns-scaling.svg)",
		"![idle-scaling](idle-scaling.svg)",
		"| stream: 1 conn, 64 KiB writes (MB/s) | engine | ≥ stdnet and ≥ 1.1× gaio | 1,512 MB/s = 0.92× stdnet (1,636), 1.03× gaio (1,468) | ❌ |\n",
		"| stream: 1 conn, 64 KiB writes (MB/s) | aio | ≥ stdnet and ≥ 1.1× gaio |",
		"| engine | 140.0k | [133.0k–147.0k] | 1.06× | 7.50 | 15.0 | 5.0 | 310 | 3,100 | 6,200 |\n",
		"| gaio | 5,332 | [5,065–5,599] | 1.49× | - | - | 5.0 | - | - | - |\n",
		"- `aio`: gale aio, swap buffer\n- `cepoll`: C, epoll LT\n- `gnet`: gnet v2 OnTraffic echo\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("report.md:\n%s", md)
	}
}

func TestWriteReportFiles(t *testing.T) {
	meta, rows := testRows()
	dir := t.TempDir()
	keep := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(keep, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(dir, meta, rows); err != nil {
		t.Fatalf("WriteReport = %v", err)
	}
	var got []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{"conns-1000.svg", "conns-19000.svg", "conns-8192.svg", "conns-scaling.svg",
		"idle-10000.svg", "idle-19000.svg", "idle-scaling.svg", "pingpong-1000x1024.svg",
		"pingpong-50x4.svg", "report.md", "results.jsonl", "stream.svg"}
	if !slices.Equal(got, want) {
		t.Errorf("files = %q, want %q", got, want)
	}
}

func TestWriteReportNewDir(t *testing.T) {
	meta, rows := testRows()
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := WriteReport(dir, meta, rows); err != nil {
		t.Fatalf("WriteReport = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.md")); err != nil {
		t.Error(err)
	}
}

// TestWriteReportDeterministic writes the report twice, the second time
// from the rows in reverse order, and wants the same bytes.
func TestWriteReportDeterministic(t *testing.T) {
	meta, rows := testRows()
	a, b := t.TempDir(), t.TempDir()
	if err := WriteReport(a, meta, rows); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(rows)
	if err := WriteReport(b, meta, rows); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(a)
	for _, e := range entries {
		x, y := readFile(t, filepath.Join(a, e.Name())), readFile(t, filepath.Join(b, e.Name()))
		if x != y {
			t.Errorf("%s differs between two runs", e.Name())
		}
	}
}

// TestWriteReportNoScaling: one conns case and no idle case give no
// scaling charts, and no gale server gives no targets.
func TestWriteReportNoScaling(t *testing.T) {
	meta := testMeta()
	meta.Gale = nil
	var recs []Record
	for _, r := range testRecords(meta) {
		if r.Case.Key() == "conns-8192" || r.Case.Key() == "stream" {
			recs = append(recs, r)
		}
	}
	dir := t.TempDir()
	if err := WriteReport(dir, meta, Summarize(meta, recs)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"conns-scaling.svg", "idle-scaling.svg", "idle-19000.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s written for a run without it", f)
		}
	}
	if md := readFile(t, filepath.Join(dir, "report.md")); !strings.Contains(md, "No gale server was measured.") {
		t.Errorf("report.md without gale servers lacks the note:\n%s", md)
	}
}

func TestFormatting(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{fmtFigure("msg/s", 131600), "131.6k"},
		{fmtFigure("msg/s", 9870.4), "9,870"},
		{fmtFigure("msg/s", 12_345_678), "12.3M"},
		{fmtFigure("MB/s", 1636.4), "1,636"},
		{fmtFigure("ms/round", 15.66), "15.7"},
		{fmtFigure("ms/round", 1234.56), "1,234.6"},
		{fmtFigure("B/conn", 1234567), "1,234,567"},
		{fmtFigure("B/conn", -123), "-123"},
		{fmtFigure("B/conn", -1234), "-1,234"},
		{fmtFigure("B/conn", -0.2), "0"},
		{fmtMicros(7.134), "7.13"},
		{fmtMicros(11071.43), "11,071"},
		{fmtMicros(0), "-"},
		{fmtLatency(4227.2), "4,227"},
		{fmtLatency(8.25), "8.2"},
		{fmtLatency(0), "-"},
		{fmtRatio(1.066), "1.07×"},
		{fmtRatio(0), "-"},
		{fmtRatio(7963), "7,963×"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("case %d: got %q, want %q", i, tt.got, tt.want)
		}
	}
}

// TestHeadLineTies: figures that read the same are all bold.
func TestHeadLineTies(t *testing.T) {
	v := &reportView{servers: []string{"a", "b", "c"}}
	l := headLine{label: "x", lower: true, vals: map[string]float64{"a": 3.49, "b": 3.5, "c": 3.9},
		format: func(x float64) string { return fmtFigure("ms/round", x) }}
	if got, want := v.mdHeadLine(l), "| x | **3.5** | **3.5** | 3.9 |\n"; got != want {
		t.Errorf("mdHeadLine = %q, want %q", got, want)
	}
}

func TestBestServer(t *testing.T) {
	vals := map[string]float64{"a": 3, "b": 1, "c": 3}
	if got, ok := bestServer(vals, false); !ok || got != "a" {
		t.Errorf("bestServer(higher) = %v, %v, want a, true", got, ok)
	}
	if got, ok := bestServer(vals, true); !ok || got != "b" {
		t.Errorf("bestServer(lower) = %v, %v, want b, true", got, ok)
	}
	if _, ok := bestServer(map[string]float64{"a": 1}, false); ok {
		t.Error("bestServer of one value = ok, want no best")
	}
}

// TestHeadLineLevel: a figure whose spread overlaps the best's is level
// with it (bold too); one outside it is not; the best alone in bold leads.
func TestHeadLineLevel(t *testing.T) {
	v := &reportView{servers: []string{"a", "b", "c"}}
	l := headLine{label: "x", lower: false, vals: map[string]float64{"a": 1390, "b": 1123, "c": 1054},
		spread: map[string]spread{"a": {1100, 1500}, "b": {1000, 1150}, "c": {1000, 1090}},
		format: func(x float64) string { return fmtFigure("MB/s", x) }}
	if got, want := v.mdHeadLine(l), "| x | **1,390** | **1,123** | 1,054 |\n"; got != want {
		t.Errorf("mdHeadLine = %q, want %q", got, want)
	}
	l.spread["a"] = spread{1200, 1500}
	if got, want := v.mdHeadLine(l), "| x | **1,390** | 1,123 | 1,054 |\n"; got != want {
		t.Errorf("mdHeadLine = %q, want %q", got, want)
	}
}

// readFile returns the file's contents as a string.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
