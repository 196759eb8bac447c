package soak

import (
	"slices"

	"github.com/galeio/gale/internal/tools/benchrun"
)

// chart is one SVG chart and the file it is written to.
type chart struct {
	file, title string
	svg         []byte
}

// charts draws each process's descriptors, goroutines and memory over
// the run, a line per process, with the phases marked.
func charts(r *Result) []chart {
	figures := []struct {
		file, title, unit string
		get               func(Sample) float64
	}{
		{"fds.svg", "open descriptors per process", "descriptors", func(s Sample) float64 { return float64(s.FDs) }},
		{"goroutines.svg", "goroutines per process", "goroutines", func(s Sample) float64 { return float64(s.Goroutines) }},
		{"rss.svg", "resident memory per process", "MiB", func(s Sample) float64 { return float64(s.RSS) / (1 << 20) }},
	}
	var out []chart
	for _, f := range figures {
		panels := []benchrun.TimePanel{
			{Title: "servers", Unit: f.unit, Series: series(r, r.Meta.Servers, f.get)},
			{Title: "client (the load generator)", Unit: f.unit, Series: series(r, []string{"client"}, f.get)},
		}
		svg := benchrun.TimeChart(f.title, panels, marks(r.Phases))
		out = append(out, chart{f.file, f.title, svg})
	}
	return out
}

// series returns a line per process named.
func series(r *Result, procs []string, get func(Sample) float64) []benchrun.Series {
	var out []benchrun.Series
	for _, p := range procs {
		s := benchrun.Series{Name: p, Gale: slices.Contains(r.Meta.Gale, p)}
		for _, sm := range r.Samples {
			if sm.Proc == p {
				s.X, s.Y = append(s.X, sm.T), append(s.Y, get(sm))
			}
		}
		out = append(out, s)
	}
	return out
}

// marks are the starts of the phases after the first.
func marks(phases []Phase) []benchrun.Mark {
	var out []benchrun.Mark
	for i, p := range phases {
		if i > 0 {
			out = append(out, benchrun.Mark{X: p.Start, Label: p.Name})
		}
	}
	return out
}
