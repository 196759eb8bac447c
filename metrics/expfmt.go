package metrics

import (
	"io"
	"strconv"
	"strings"
)

// The Prometheus text exposition format, version 0.0.4, written from
// scratch: a family is a "# HELP" line, a "# TYPE" line and its samples,
// one per line, "name{label="value",...} value". Every sample of a
// family follows its TYPE line, so families gather the samples of every
// source before anything is written.

// contentType is the format's media type.
const contentType = "text/plain; version=0.0.4; charset=utf-8"

// The metric types used here.
const (
	counter = "counter"
	gauge   = "gauge"
)

// family is a metric family being gathered.
type family struct {
	name, help, typ string
	samples         []sample
}

// sample is one line of a family: its labels, written already, and its
// value.
type sample struct {
	labels string // `{k="v",...}`, or empty
	value  string
}

// families gathers families in the order first seen. It belongs to one
// scrape: not safe for concurrent use.
type families struct {
	order  []*family
	byName map[string]*family
}

func newFamilies() *families { return &families{byName: make(map[string]*family)} }

// add adds a sample of family name (made with help and typ if new) with
// labels, given as name, value pairs.
func (fs *families) add(name, typ, help string, v string, labels ...string) {
	f := fs.byName[name]
	if f == nil {
		f = &family{name: name, help: help, typ: typ}
		fs.byName[name] = f
		fs.order = append(fs.order, f)
	}
	f.samples = append(f.samples, sample{labels: labelSet(labels), value: v})
}

// counter adds a counter's sample; name ends in _total.
func (fs *families) counter(name, help string, v uint64, labels ...string) {
	fs.add(name, counter, help, strconv.FormatUint(v, 10), labels...)
}

// gauge adds a gauge's sample.
func (fs *families) gauge(name, help string, v int64, labels ...string) {
	fs.add(name, gauge, help, strconv.FormatInt(v, 10), labels...)
}

// labelSet writes name, value pairs as `{n="v",...}`.
func labelSet(kv []string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		labelEscaper.WriteString(&b, kv[i+1])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// The format's escapes: in HELP text a backslash and a line feed; in a
// label value a double quote too.
var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// writeTo writes the families in the text format.
func (fs *families) writeTo(w io.Writer) error {
	var b strings.Builder
	for _, f := range fs.order {
		b.WriteString("# HELP ")
		b.WriteString(f.name)
		b.WriteByte(' ')
		helpEscaper.WriteString(&b, f.help)
		b.WriteString("\n# TYPE ")
		b.WriteString(f.name)
		b.WriteByte(' ')
		b.WriteString(f.typ)
		b.WriteByte('\n')
		for _, s := range f.samples {
			b.WriteString(f.name)
			b.WriteString(s.labels)
			b.WriteByte(' ')
			b.WriteString(s.value)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
