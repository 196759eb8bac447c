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

// TimePanel is one panel of a TimeChart: its series share a y axis
// titled Unit.
type TimePanel struct {
	Title, Unit string
	Series      []Series
}

// Mark is a dashed vertical line across a TimeChart's panels, such as the
// start of a phase, labelled at the top.
type Mark struct {
	X     float64
	Label string
}

// Time charts have a wider legend than the scaling charts, for longer
// names; each panel has its own.
const (
	timeW, timePanelH, timeLegendW = 800, 320, 170
)

// TimeChart draws panels of series against time, in seconds, one above
// the other on a shared time axis, each with its legend on the right:
// the soak's descriptor, goroutine and memory charts. Each y axis starts
// at 0; marks are dashed vertical lines. It returns the SVG document.
func TimeChart(title string, panels []TimePanel, marks []Mark) []byte {
	d := newSVG(timeW, 40+timePanelH*len(panels), title)
	xmax := 0.0
	for _, pn := range panels {
		for _, s := range pn.Series {
			for _, x := range s.X {
				xmax = max(xmax, x)
			}
		}
	}
	xa := niceAxis(0, xmax)
	for i, pn := range panels {
		drawTimePanel(d, 36+float64(i*timePanelH), xa, pn, marks)
	}
	return d.bytes()
}

// drawTimePanel draws one panel with its top edge at top.
func drawTimePanel(d *svgDoc, top float64, xa yAxis, pn TimePanel, marks []Mark) {
	lo, hi := 0.0, 0.0
	for _, s := range pn.Series {
		for _, y := range s.Y {
			lo, hi = min(lo, y), max(hi, y)
		}
	}
	p := plotArea{left: 72, right: timeW - timeLegendW - 20, top: top + 44, bottom: top + timePanelH - 46, axis: niceAxis(lo, hi)}
	x := func(v float64) float64 { return p.left + xa.frac(v)*(p.right-p.left) }
	d.text((p.left+p.right)/2, top+16, "middle", `font-weight="bold"`, pn.Title)
	p.drawGrid(d, pn.Unit)
	d.line(p.left, p.bottom, p.right, p.bottom, chartAxis, "")
	for _, t := range xa.ticks {
		d.line(x(t), p.bottom, x(t), p.bottom+4, chartAxis, "")
		d.text(x(t), p.bottom+16, "middle", "", xa.label(t))
	}
	d.text((p.left+p.right)/2, p.bottom+34, "middle", "", "seconds since the start")
	for i, m := range marks {
		d.line(x(m.X), p.top, x(m.X), p.bottom, "#555555", `stroke-dasharray="4 4" class="mark"`)
		// Alternate heights, so that labels of close marks do not overlap.
		d.text(x(m.X)+3, p.top-4-float64(i%2)*11, "start", `font-size="10"`, m.Label)
	}
	legend := seriesLegend(pn.Series)
	for i, s := range pn.Series {
		drawTimeSeries(d, p, x, s, legend[i])
	}
	drawLegend(d, timeW-timeLegendW, p.top+12, legend)
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
