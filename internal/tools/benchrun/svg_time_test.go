package benchrun

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTimeChart draws two panels and a mark: one polyline per series
// with a point per sample, inside its panel, x growing with time; the
// mark, the names and the units present; the document well-formed.
func TestTimeChart(t *testing.T) {
	panels := []TimePanel{
		{Title: "servers", Unit: "descriptors", Series: []Series{
			{Name: "engine", Gale: true, X: []float64{0, 1, 2, 3}, Y: []float64{10, 40, 40, 10}},
			{Name: "aio", Gale: true, X: []float64{0, 1, 2, 3}, Y: []float64{10, 30, 20, 10}},
		}},
		{Title: "client", Unit: "fds", Series: []Series{
			{Name: `client <&>`, X: []float64{0, 1.5, 3}, Y: []float64{5, 7, 5}},
		}},
	}
	svg := TimeChart("fds over time", panels, []Mark{{X: 1, Label: "load"}})
	path := filepath.Join(t.TempDir(), "t.svg")
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		t.Fatal(err)
	}
	if n := svgCounts(t, path); n["polyline"] != 3 {
		t.Errorf("TimeChart drew %d polylines, want 3", n["polyline"])
	}
	s := string(svg)
	if got := strings.Count(s, `class="mark"`); got != 2 {
		t.Errorf("TimeChart drew the mark %d times, want once per panel", got)
	}
	for _, want := range []string{">load<", ">engine<", ">client &lt;&amp;&gt;<", ">descriptors<", ">fds<", galeColors[0], galeColors[1], peerColors[0]} {
		if !strings.Contains(s, want) {
			t.Errorf("TimeChart lacks %q", want)
		}
	}
	pts := regexp.MustCompile(`points="([^"]*)"`).FindAllStringSubmatch(s, -1)
	series := append(panels[0].Series, panels[1].Series...)
	for i, m := range pts {
		f := strings.Fields(m[1])
		if len(f) != len(series[i].X) {
			t.Fatalf("series %d has %d points, want %d", i, len(f), len(series[i].X))
		}
		top := 36.0 + 44
		if i == 2 {
			top += timePanelH
		}
		last := -1.0
		for _, p := range f {
			xs, ys, _ := strings.Cut(p, ",")
			x, _ := strconv.ParseFloat(xs, 64)
			y, _ := strconv.ParseFloat(ys, 64)
			if x <= last || x < 72 || x > timeW-timeLegendW-20 || y < top || y > top+timePanelH-90 {
				t.Errorf("series %d point %s out of order or outside its panel", i, p)
			}
			last = x
		}
	}
}
