package benchrun

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The charts are hand-written SVG: a white background and dark text, so
// they read the same on GitHub's light and dark themes, and one color per
// server, fixed by its place in meta.Servers so it matches across charts.

// chartFile is one SVG chart and the name it is written under.
type chartFile struct {
	file string
	svg  []byte
}

// Chart palettes: gale's servers take the strong colors, in order; the
// others the medium ones.
var (
	galeColors = []string{"#c2185b", "#0d47a1", "#e65100", "#1b5e20"}
	peerColors = []string{"#7f8c8d", "#59a14f", "#f28e2b", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#4e79a7", "#bab0ac"}
)

const (
	chartInk  = "#222222" // text and whiskers
	chartGrid = "#e3e3e3"
	chartAxis = "#888888"
)

// charts renders a bar chart per case, then the scaling line charts of
// conns, idle and tls-idle when each has at least two connection counts.
func (v *reportView) charts() []chartFile {
	var cs []chartFile
	for _, c := range v.cases {
		cs = append(cs, chartFile{c.Key() + ".svg", v.barChart(c)})
	}
	for _, sc := range []string{"conns", "idle", "tls-idle"} {
		if s := v.scalingChart(sc); s != nil {
			cs = append(cs, chartFile{sc + "-scaling.svg", s})
		}
	}
	return cs
}

// serverColor returns srv's color: gale's servers by their place among
// gale's, the others by theirs among the others.
func (v *reportView) serverColor(srv string) string {
	n := 0
	for _, s := range v.servers {
		if s == srv {
			break
		}
		if v.gale[s] == v.gale[srv] {
			n++
		}
	}
	if v.gale[srv] {
		return galeColors[n%len(galeColors)]
	}
	return peerColors[n%len(peerColors)]
}

// svgDoc accumulates one SVG document.
type svgDoc struct{ b strings.Builder }

// newSVG starts a w×h document with a white background and title.
func newSVG(w, h int, title string) *svgDoc {
	d := &svgDoc{}
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&d.b, "<title>%s</title>\n", xmlText(title))
	fmt.Fprintf(&d.b, `<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>`+"\n", w, h)
	d.text(float64(w)/2, 22, "middle", `font-size="14" font-weight="bold"`, title)
	return d
}

// bytes ends the document.
func (d *svgDoc) bytes() []byte {
	d.b.WriteString("</svg>\n")
	return []byte(d.b.String())
}

// text writes s at x, y; anchor is start, middle or end; attrs are more
// attributes, already escaped.
func (d *svgDoc) text(x, y float64, anchor, attrs, s string) {
	if attrs != "" {
		attrs = " " + attrs
	}
	fmt.Fprintf(&d.b, `<text x="%s" y="%s" text-anchor="%s" fill="%s"%s>%s</text>`+"\n",
		svgNum(x), svgNum(y), anchor, chartInk, attrs, xmlText(s))
}

// line writes a line segment; attrs are more attributes, already escaped.
func (d *svgDoc) line(x1, y1, x2, y2 float64, stroke, attrs string) {
	if attrs != "" {
		attrs = " " + attrs
	}
	fmt.Fprintf(&d.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s"%s/>`+"\n",
		svgNum(x1), svgNum(y1), svgNum(x2), svgNum(y2), stroke, attrs)
}

// svgNum formats a coordinate with one decimal.
func svgNum(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// xmlText escapes s for XML text and attribute values.
func xmlText(s string) string { return xmlEscaper.Replace(s) }

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

// plotArea is a chart's plotting rectangle and its y axis.
type plotArea struct {
	left, right, top, bottom float64
	axis                     yAxis
}

// y maps a value to its vertical position.
func (p plotArea) y(x float64) float64 {
	return p.bottom - p.axis.frac(x)*(p.bottom-p.top)
}

// drawGrid draws the gridlines, tick labels and, if label is not empty,
// the y axis title.
func (p plotArea) drawGrid(d *svgDoc, label string) {
	for _, t := range p.axis.ticks {
		y := p.y(t)
		d.line(p.left, y, p.right, y, chartGrid, "")
		d.text(p.left-6, y+4, "end", "", p.axis.label(t))
	}
	d.line(p.left, p.top, p.left, p.bottom, chartAxis, "")
	if label != "" {
		x, y := 14.0, (p.top+p.bottom)/2
		d.text(x, y, "middle", fmt.Sprintf(`transform="rotate(-90 %s %s)"`, svgNum(x), svgNum(y)), label)
	}
}

// yAxis is a value axis: nice ticks from at most 0 up to the top value.
type yAxis struct {
	ticks    []float64
	decimals int // of the step
}

// niceAxis returns about five ticks, 1, 2 or 5 × 10^k apart, covering lo
// to hi and 0.
func niceAxis(lo, hi float64) yAxis {
	lo, hi = min(lo, 0), max(hi, 0)
	if hi-lo <= 0 || math.IsNaN(hi-lo) || math.IsInf(hi-lo, 0) {
		return yAxis{ticks: []float64{0, 1}}
	}
	raw := (hi - lo) / 5
	k := math.Floor(math.Log10(raw))
	step := math.Pow(10, k+1)
	for _, m := range []float64{1, 2, 5} {
		if m*math.Pow(10, k) >= raw*(1-1e-9) {
			step = m * math.Pow(10, k)
			break
		}
	}
	a := yAxis{decimals: max(0, -int(math.Floor(math.Log10(step)+1e-9)))}
	for i := math.Floor(lo/step + 1e-9); i <= math.Ceil(hi/step-1e-9); i++ {
		a.ticks = append(a.ticks, i*step)
	}
	return a
}

// frac is where x lies on the axis: 0 at the first tick, 1 at the last.
func (a yAxis) frac(x float64) float64 {
	return (x - a.ticks[0]) / (a.ticks[len(a.ticks)-1] - a.ticks[0])
}

// label formats tick t: in k or M when the axis reaches 10,000 or 10^7.
func (a yAxis) label(t float64) string {
	top := math.Max(math.Abs(a.ticks[0]), math.Abs(a.ticks[len(a.ticks)-1]))
	switch {
	case t == 0:
		return groupFloat(0, a.decimals)
	case top >= 1e7:
		return groupFloat(t/1e6, max(0, a.decimals-6)) + "M"
	case top >= 1e4:
		return groupFloat(t/1e3, max(0, a.decimals-3)) + "k"
	}
	return groupFloat(t, a.decimals)
}

// betterText says which way is better, for titles.
func betterText(lower bool) string {
	if lower {
		return "↓ lower is better"
	}
	return "↑ higher is better"
}

// Bar charts are about 720×360.
const (
	barW, barH = 720, 360
)

// barChart draws case c: a bar per server at its median, a whisker from
// min to max, the median above it, and a dashed line at the reference's
// median (std net's, or std-tls's).
func (v *reportView) barChart(c Case) []byte {
	d := newSVG(barW, barH, fmt.Sprintf("%s (%s, %s)", c.Title(), c.Unit(), betterText(c.LowerIsBetter())))
	lo, hi := 0.0, 0.0
	for _, r := range v.caseRows(c) {
		lo, hi = min(lo, r.Min, r.Median), max(hi, r.Max, r.Median)
	}
	p := plotArea{left: 72, right: barW - 56, top: 48, bottom: barH - 52, axis: niceAxis(lo, hi)}
	p.drawGrid(d, c.Unit())
	slot := (p.right - p.left) / float64(max(len(v.servers), 1))
	for i, s := range v.servers {
		v.drawBar(d, p, c, s, p.left+slot*(float64(i)+0.5), slot)
	}
	d.line(p.left, p.y(0), p.right, p.y(0), chartAxis, "")
	if ref, ok := v.row(c, c.Reference()); ok {
		y := p.y(ref.Median)
		d.line(p.left, y, p.right, y, "#555555", `stroke-width="1.5" stroke-dasharray="6 4"`)
		d.text(p.right+4, y+4, "start", `font-size="11"`, ref.Server)
	}
	return d.bytes()
}

// drawBar draws server srv's bar for case c centred at x, or "n/a" when
// srv has no row for c.
func (v *reportView) drawBar(d *svgDoc, p plotArea, c Case, srv string, x, slot float64) {
	v.serverLabel(d, srv, x, p.bottom+18, slot)
	r, ok := v.row(c, srv)
	if !ok {
		d.text(x, p.y(0)-6, "middle", `font-size="11" font-style="italic"`, "n/a")
		return
	}
	w := min(slot*0.6, 56)
	y0, y1 := p.y(0), p.y(r.Median)
	fmt.Fprintf(&d.b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %s %s</title></rect>`+"\n",
		svgNum(x-w/2), svgNum(min(y0, y1)), svgNum(w), svgNum(math.Abs(y1-y0)), v.serverColor(srv),
		xmlText(srv), xmlText(fmtFigure(c.Unit(), r.Median)), xmlText(c.Unit()))
	if r.Max > r.Min {
		lo, hi := p.y(r.Min), p.y(r.Max)
		d.line(x, lo, x, hi, chartInk, `stroke-width="1.5" class="whisker"`)
		d.line(x-w/6, lo, x+w/6, lo, chartInk, `stroke-width="1.5"`)
		d.line(x-w/6, hi, x+w/6, hi, chartInk, `stroke-width="1.5"`)
	}
	d.text(x, min(y1, p.y(r.Max))-5, "middle", `font-size="11"`, fmtFigure(c.Unit(), r.Median))
}

// serverLabel writes srv's name under its slot, in bold for gale's
// servers, slanted when slots are narrow.
func (v *reportView) serverLabel(d *svgDoc, srv string, x, y, slot float64) {
	var attrs []string
	if v.gale[srv] {
		attrs = append(attrs, `font-weight="bold"`)
	}
	anchor := "middle"
	if slot < 56 {
		anchor = "end"
		attrs = append(attrs, fmt.Sprintf(`transform="rotate(-30 %s %s)"`, svgNum(x), svgNum(y)))
	}
	d.text(x, y, anchor, strings.Join(attrs, " "), srv)
}

// scalePanel is one panel of a scaling chart: a figure against the
// connection count.
type scalePanel struct {
	title  string
	get    func(Row) (float64, bool)
	format func(float64) string
}

// scalingPanels returns the panels of scenario's scaling chart and its
// title.
func scalingPanels(scenario string) (string, []scalePanel) {
	median := func(r Row) (float64, bool) { return r.Median, true }
	if scenario == "idle" || scenario == "tls-idle" {
		return scenario + ": server RSS growth per connection by connection count", []scalePanel{
			{"B/conn (↓ lower is better)", median, func(x float64) string { return fmtFigure("B/conn", x) }},
		}
	}
	cpu := func(r Row) (float64, bool) { return r.CPUPerMsg, r.CPUPerMsg > 0 }
	return "conns: 1 KiB echo per connection, by connection count", []scalePanel{
		{"ms/round (↓ lower is better)", median, func(x float64) string { return fmtFigure("ms/round", x) }},
		{"server CPU µs per echo (↓ lower is better)", cpu, fmtMicros},
	}
}

// Scaling charts are 720 wide, a panel 300 high, with a legend on the
// right.
const (
	lineW, panelH, legendW = 720, 300, 130
)

// scalingChart draws scenario's figures against the connection count,
// one line per server; nil when fewer than two counts were measured.
func (v *reportView) scalingChart(scenario string) []byte {
	var cases []Case
	for _, c := range v.cases {
		if c.Scenario == scenario {
			cases = append(cases, c)
		}
	}
	if len(cases) < 2 {
		return nil
	}
	title, panels := scalingPanels(scenario)
	d := newSVG(lineW, 40+panelH*len(panels), title)
	for i, pn := range panels {
		v.drawPanel(d, 36+float64(i*panelH), cases, pn)
	}
	drawLegend(d, lineW-legendW, 60, v.legend())
	return d.bytes()
}

// drawPanel draws one panel with its top edge at top.
func (v *reportView) drawPanel(d *svgDoc, top float64, cases []Case, pn scalePanel) {
	lo, hi := 0.0, 0.0
	for _, c := range cases {
		for _, r := range v.caseRows(c) {
			if x, ok := pn.get(r); ok {
				lo, hi = min(lo, x), max(hi, x)
			}
		}
	}
	p := plotArea{left: 72, right: lineW - legendW - 20, top: top + 30, bottom: top + panelH - 46, axis: niceAxis(lo, hi)}
	d.text((p.left+p.right)/2, top+16, "middle", `font-weight="bold"`, pn.title)
	p.drawGrid(d, "")
	d.line(p.left, p.bottom, p.right, p.bottom, chartAxis, "")
	slot := (p.right - p.left) / float64(len(cases))
	for i, c := range cases {
		d.text(p.left+slot*(float64(i)+0.5), p.bottom+16, "middle", "", count(c.Conns))
	}
	d.text((p.left+p.right)/2, p.bottom+34, "middle", "", "connections")
	for _, s := range v.servers {
		v.drawSeries(d, p, cases, pn, s, slot)
	}
}

// drawSeries draws server srv's line and points; a case srv lacks is
// skipped.
func (v *reportView) drawSeries(d *svgDoc, p plotArea, cases []Case, pn scalePanel, srv string, slot float64) {
	var pts []string
	var marks strings.Builder
	width, radius := "1.5", 3.0
	if v.gale[srv] {
		width, radius = "3", 4.5
	}
	color := v.serverColor(srv)
	for i, c := range cases {
		r, ok := v.row(c, srv)
		x, has := pn.get(r)
		if !ok || !has {
			continue
		}
		cx, cy := p.left+slot*(float64(i)+0.5), p.y(x)
		pts = append(pts, svgNum(cx)+","+svgNum(cy))
		fmt.Fprintf(&marks, `<circle class="point" cx="%s" cy="%s" r="%s" fill="%s"><title>%s: %s at %s conns</title></circle>`+"\n",
			svgNum(cx), svgNum(cy), svgNum(radius), color, xmlText(srv), xmlText(pn.format(x)), count(c.Conns))
	}
	if len(pts) >= 2 {
		fmt.Fprintf(&d.b, `<polyline class="series" points="%s" fill="none" stroke="%s" stroke-width="%s"/>`+"\n",
			strings.Join(pts, " "), color, width)
	}
	d.b.WriteString(marks.String())
}

// legendEntry is one line of a chart's legend.
type legendEntry struct {
	name, color string
	bold        bool // gale's: drawn thicker, named in bold
}

// legend returns the servers' legend entries, in order.
func (v *reportView) legend() []legendEntry {
	es := make([]legendEntry, 0, len(v.servers))
	for _, s := range v.servers {
		es = append(es, legendEntry{s, v.serverColor(s), v.gale[s]})
	}
	return es
}

// drawLegend lists the entries with their colors from top down, from
// x, top.
func drawLegend(d *svgDoc, x, top float64, entries []legendEntry) {
	for i, e := range entries {
		y := top + float64(i)*20
		width := "1.5"
		attrs := ""
		if e.bold {
			width, attrs = "3", `font-weight="bold"`
		}
		d.line(x, y, x+24, y, e.color, `stroke-width="`+width+`"`)
		fmt.Fprintf(&d.b, `<circle cx="%s" cy="%s" r="3.5" fill="%s"/>`+"\n", svgNum(x+12), svgNum(y), e.color)
		d.text(x+32, y+4, "start", attrs, e.name)
	}
}
