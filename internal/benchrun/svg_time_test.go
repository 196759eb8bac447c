package benchrun

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTimeChart draws two series and a mark: one polyline per series with
// a point per sample, inside the plot, x growing with time, the mark and
// the names present, and the document well-formed.
func TestTimeChart(t *testing.T) {
	series := []Series{
		{Name: "engine", Gale: true, X: []float64{0, 1, 2, 3}, Y: []float64{10, 40, 40, 10}},
		{Name: `client <&>`, X: []float64{0, 1.5, 3}, Y: []float64{5, 7, 5}},
	}
	svg := TimeChart("fds over time", "descriptors", series, []Mark{{X: 1, Label: "warm-up ends"}})
	path := filepath.Join(t.TempDir(), "t.svg")
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	n := svgCounts(t, path)
	if n["polyline"] != 2 {
		t.Errorf("TimeChart drew %d polylines, want 2", n["polyline"])
	}
	s := string(svg)
	for _, want := range []string{`class="mark"`, ">warm-up ends<", ">engine<", ">client &lt;&amp;&gt;<", ">descriptors<", galeColors[0], peerColors[0]} {
		if !strings.Contains(s, want) {
			t.Errorf("TimeChart lacks %q", want)
		}
	}
	pts := regexp.MustCompile(`points="([^"]*)"`).FindAllStringSubmatch(s, -1)
	for i, m := range pts {
		f := strings.Fields(m[1])
		if len(f) != len(series[i].X) {
			t.Fatalf("series %d has %d points, want %d", i, len(f), len(series[i].X))
		}
		last := -1.0
		for _, p := range f {
			xs, ys, _ := strings.Cut(p, ",")
			x, _ := strconv.ParseFloat(xs, 64)
			y, _ := strconv.ParseFloat(ys, 64)
			if x <= last || x < 72 || x > lineW-legendW-20 || y < 48 || y > timeH-52 {
				t.Errorf("series %d point %s out of order or outside the plot", i, p)
			}
			last = x
		}
	}
}
