package benchrun

import (
	"fmt"
	"strings"
)

// Series is one line of a TimeChart: the value Y[i] at X[i] seconds.
type Series struct {
	Name string
	// Gale marks gale's own servers: drawn in the strong colors, thicker,
	// named in bold.
	Gale bool
	X, Y []float64
}

// Mark is a dashed vertical line across a TimeChart, such as the end of a
// phase, labelled at its top.
type Mark struct {
	X     float64
	Label string
}

// Time charts are as wide as the scaling charts, with the same legend.
const timeH = 380

// TimeChart draws series against time, in seconds, on one panel with a
// legend on the right: the soak's descriptor, goroutine and memory
// charts. The y axis starts at 0 and is titled unit; marks are drawn as
// dashed vertical lines. It returns the SVG document.
func TimeChart(title, unit string, series []Series, marks []Mark) []byte {
	d := newSVG(lineW, timeH, title)
	xmax, lo, hi := 0.0, 0.0, 0.0
	for _, s := range series {
		for i := range s.X {
			xmax, lo, hi = max(xmax, s.X[i]), min(lo, s.Y[i]), max(hi, s.Y[i])
		}
	}
	p := plotArea{left: 72, right: lineW - legendW - 20, top: 48, bottom: timeH - 52, axis: niceAxis(lo, hi)}
	xa := niceAxis(0, xmax)
	x := func(v float64) float64 { return p.left + xa.frac(v)*(p.right-p.left) }
	p.drawGrid(d, unit)
	d.line(p.left, p.bottom, p.right, p.bottom, chartAxis, "")
	for _, t := range xa.ticks {
		d.line(x(t), p.bottom, x(t), p.bottom+4, chartAxis, "")
		d.text(x(t), p.bottom+16, "middle", "", xa.label(t))
	}
	d.text((p.left+p.right)/2, p.bottom+34, "middle", "", "seconds since the start")
	for _, m := range marks {
		d.line(x(m.X), p.top, x(m.X), p.bottom, "#555555", `stroke-dasharray="4 4" class="mark"`)
		d.text(x(m.X)+3, p.top-4, "start", `font-size="10"`, m.Label)
	}
	legend := seriesLegend(series)
	for i, s := range series {
		drawTimeSeries(d, p, x, s, legend[i])
	}
	drawLegend(d, 60, legend)
	return d.bytes()
}

// seriesLegend gives each series its color: gale's take the strong colors
// in order, the others the medium ones.
func seriesLegend(series []Series) []legendEntry {
	var es []legendEntry
	ng, np := 0, 0
	for _, s := range series {
		c := peerColors[np%len(peerColors)]
		if s.Gale {
			c = galeColors[ng%len(galeColors)]
			ng++
		} else {
			np++
		}
		es = append(es, legendEntry{s.Name, c, s.Gale})
	}
	return es
}

// drawTimeSeries draws one series as a polyline.
func drawTimeSeries(d *svgDoc, p plotArea, x func(float64) float64, s Series, e legendEntry) {
	pts := make([]string, 0, len(s.X))
	for i := range s.X {
		pts = append(pts, svgNum(x(s.X[i]))+","+svgNum(p.y(s.Y[i])))
	}
	width := "1.5"
	if e.bold {
		width = "2.5"
	}
	fmt.Fprintf(&d.b, `<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="%s"><title>%s</title></polyline>`+"\n",
		strings.Join(pts, " "), e.color, width, xmlText(s.Name))
}
