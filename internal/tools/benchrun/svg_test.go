package benchrun

import (
	"encoding/xml"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// svgCounts parses an SVG file strictly and counts its elements by
// name, and "bar" rects separately.
func svgCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int{}
	dec := xml.NewDecoder(f)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			n[se.Name.Local]++
			if slices.Contains(se.Attr, xml.Attr{Name: xml.Name{Local: "class"}, Value: "bar"}) {
				n["bar"]++
			}
		}
	}
}

func TestBarCharts(t *testing.T) {
	meta, rows := testRows()
	dir := t.TempDir()
	if err := WriteReport(dir, meta, rows); err != nil {
		t.Fatal(err)
	}
	for _, tf := range testFigures {
		path := filepath.Join(dir, tf.c.Key()+".svg")
		n := svgCounts(t, path)
		if n["bar"] != len(tf.figs) {
			t.Errorf("%s has %d bars, want %d", tf.c.Key(), n["bar"], len(tf.figs))
		}
		if n["svg"] != 1 || n["title"] < 1 {
			t.Errorf("%s: %d svg and %d title elements, want 1 and at least 1", tf.c.Key(), n["svg"], n["title"])
		}
	}
	s := readFile(t, filepath.Join(dir, "conns-19000.svg"))
	for _, want := range []string{">n/a</text>", "(ms/round, ↓ lower is better)", `stroke-dasharray="6 4"`, `fill="#ffffff"`} {
		if !strings.Contains(s, want) {
			t.Errorf("conns-19000.svg lacks %q", want)
		}
	}
	if s := readFile(t, filepath.Join(dir, "stream.svg")); !strings.Contains(s, "(MB/s, ↑ higher is better)") {
		t.Errorf("stream.svg lacks the direction in its title")
	}
}

// TestScalingCharts counts lines and points: gnet lacks conns-19000.
func TestScalingCharts(t *testing.T) {
	meta, rows := testRows()
	dir := t.TempDir()
	if err := WriteReport(dir, meta, rows); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		file            string
		polylines, dots int
	}{
		{"conns-scaling.svg", 2 * 6, 2 * (6*3 - 1)},
		{"idle-scaling.svg", 6, 6 * 2},
	}
	for _, tt := range tests {
		n := svgCounts(t, filepath.Join(dir, tt.file))
		if n["polyline"] != tt.polylines {
			t.Errorf("%s has %d polylines, want %d", tt.file, n["polyline"], tt.polylines)
		}
		if got := strings.Count(readFile(t, filepath.Join(dir, tt.file)), `class="point"`); got != tt.dots {
			t.Errorf("%s has %d points, want %d", tt.file, got, tt.dots)
		}
	}
}

// TestSVGEscapes feeds names that need escaping.
func TestSVGEscapes(t *testing.T) {
	meta := testMeta()
	meta.Servers = []string{`a<b>&"c'`, "stdnet"}
	meta.Gale = nil
	recs := []Record{
		{Case: Case{Scenario: "conns", Conns: 1000, Size: connsSize}, Server: meta.Servers[0], Value: 10, Msgs: 1},
		{Case: Case{Scenario: "conns", Conns: 2000, Size: connsSize}, Server: meta.Servers[0], Value: 20, Msgs: 1},
		{Case: Case{Scenario: "conns", Conns: 1000, Size: connsSize}, Server: "stdnet", Value: 12, Msgs: 1},
	}
	dir := t.TempDir()
	if err := WriteReport(dir, meta, Summarize(meta, recs)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"conns-1000.svg", "conns-2000.svg", "conns-scaling.svg"} {
		svgCounts(t, filepath.Join(dir, f))
	}
}

func TestServerColors(t *testing.T) {
	meta, rows := testRows()
	v := newReportView(meta, rows)
	seen := map[string]string{}
	for _, s := range v.servers {
		c := v.serverColor(s)
		if other, ok := seen[c]; ok {
			t.Errorf("%s and %s share color %s", s, other, c)
		}
		seen[c] = s
	}
	if got := v.serverColor("aio"); got != galeColors[0] {
		t.Errorf("serverColor(aio) = %s, want %s", got, galeColors[0])
	}
}

func TestNiceAxis(t *testing.T) {
	tests := []struct {
		lo, hi float64
		ticks  []float64
		labels []string
	}{
		{0, 1636, []float64{0, 500, 1000, 1500, 2000}, []string{"0", "500", "1,000", "1,500", "2,000"}},
		{0, 150000, []float64{0, 50000, 100000, 150000}, []string{"0", "50k", "100k", "150k"}},
		{0, 7.5, []float64{0, 2, 4, 6, 8}, []string{"0", "2", "4", "6", "8"}},
		{0, 0.9, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{-3, 8, []float64{-5, 0, 5, 10}, []string{"-5", "0", "5", "10"}},
		{0, 0, []float64{0, 1}, []string{"0", "1"}},
	}
	for _, tt := range tests {
		a := niceAxis(tt.lo, tt.hi)
		var labels []string
		for i, x := range a.ticks {
			labels = append(labels, a.label(x))
			if i < len(tt.ticks) && math.Abs(x-tt.ticks[i]) > 1e-9 {
				t.Errorf("niceAxis(%v, %v) tick %d = %v, want %v", tt.lo, tt.hi, i, x, tt.ticks[i])
			}
		}
		if len(a.ticks) != len(tt.ticks) || !slices.Equal(labels, tt.labels) {
			t.Errorf("niceAxis(%v, %v) labels = %q, want %q", tt.lo, tt.hi, labels, tt.labels)
		}
	}
}
