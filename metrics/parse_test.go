package metrics_test

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A strict reader of the text exposition format 0.0.4, for the tests:
// it rejects what a lenient scraper would let through (a sample before
// its TYPE, a family split in two, a counter without _total, a repeated
// series, an unknown escape, a blank line, a missing final line feed).

var (
	metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	labelName  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)
)

// exposition is what parseExposition read: each series' value, keyed by
// its name and its labels in order of name (`name{a="x",b="y"}`), and
// each family's type and help.
type exposition struct {
	values map[string]float64
	types  map[string]string
	help   map[string]string
}

func parseExposition(text string) (*exposition, error) {
	x := &exposition{values: map[string]float64{}, types: map[string]string{}, help: map[string]string{}}
	if text == "" {
		return x, nil
	}
	if !strings.HasSuffix(text, "\n") {
		return nil, fmt.Errorf("no final line feed")
	}
	done := map[string]bool{} // families whose samples ended
	cur := ""                 // the family whose samples may follow
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if err := x.line(line, &cur, done); err != nil {
			return nil, fmt.Errorf("line %d %q: %v", i+1, line, err)
		}
	}
	return x, nil
}

func (x *exposition) line(line string, cur *string, done map[string]bool) error {
	switch {
	case line == "":
		return fmt.Errorf("blank line")
	case strings.HasPrefix(line, "# HELP "):
		name, help, ok := strings.Cut(line[len("# HELP "):], " ")
		if !ok || !metricName.MatchString(name) {
			return fmt.Errorf("bad HELP")
		}
		if _, dup := x.help[name]; dup || done[name] {
			return fmt.Errorf("second HELP for %s", name)
		}
		h, err := unescape(help, false)
		if err != nil {
			return err
		}
		x.help[name] = h
		if *cur != "" {
			done[*cur] = true
		}
		*cur = name
		return nil
	case strings.HasPrefix(line, "# TYPE "):
		name, typ, ok := strings.Cut(line[len("# TYPE "):], " ")
		switch {
		case !ok || !metricName.MatchString(name):
			return fmt.Errorf("bad TYPE")
		case typ != "counter" && typ != "gauge":
			return fmt.Errorf("type %q", typ)
		case x.types[name] != "" || name != *cur:
			return fmt.Errorf("TYPE of %s not right after its HELP", name)
		case typ == "counter" && !strings.HasSuffix(name, "_total"):
			return fmt.Errorf("counter %s without _total", name)
		}
		x.types[name] = typ
		return nil
	case strings.HasPrefix(line, "#"):
		return fmt.Errorf("comment")
	}
	return x.sample(line, *cur)
}

func (x *exposition) sample(line, cur string) error {
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return fmt.Errorf("no value")
	}
	name, rest := line[:i], line[i:]
	if name != cur || x.types[name] == "" {
		return fmt.Errorf("sample of %s outside its family (after its TYPE)", name)
	}
	labels := map[string]string{}
	if rest[0] == '{' {
		var err error
		if rest, err = parseLabels(rest[1:], labels); err != nil {
			return err
		}
	}
	if len(rest) < 2 || rest[0] != ' ' || strings.Contains(rest[1:], " ") {
		return fmt.Errorf("want one space and a value, no timestamp")
	}
	v, err := strconv.ParseFloat(rest[1:], 64)
	if err != nil || math.IsNaN(v) {
		return fmt.Errorf("value %q", rest[1:])
	}
	if x.types[name] == "counter" && v < 0 {
		return fmt.Errorf("negative counter")
	}
	key := seriesKey(name, labels)
	if _, dup := x.values[key]; dup {
		return fmt.Errorf("series %s twice", key)
	}
	x.values[key] = v
	return nil
}

// parseLabels reads `a="x",b="y"}` into labels and returns what follows.
func parseLabels(s string, labels map[string]string) (string, error) {
	for {
		eq := strings.Index(s, `="`)
		if eq < 0 || !labelName.MatchString(s[:eq]) {
			return "", fmt.Errorf("bad label name in %q", s)
		}
		name := s[:eq]
		s = s[eq+2:]
		end := closingQuote(s)
		if end < 0 {
			return "", fmt.Errorf("unterminated label value")
		}
		v, err := unescape(s[:end], true)
		if err != nil {
			return "", err
		}
		if _, dup := labels[name]; dup {
			return "", fmt.Errorf("label %s twice", name)
		}
		labels[name] = v
		s = s[end+1:]
		switch {
		case strings.HasPrefix(s, "}"):
			return s[1:], nil
		case strings.HasPrefix(s, ","):
			s = s[1:]
		default:
			return "", fmt.Errorf("want , or } after a label")
		}
	}
}

// closingQuote returns the index of the first unescaped '"' in s, or -1.
func closingQuote(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return i
		case '\n':
			return -1
		}
	}
	return -1
}

// unescape undoes the format's escapes: \\ and \n, and \" in a label
// value; any other backslash is an error.
func unescape(s string, label bool) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			if label && s[i] == '"' {
				return "", fmt.Errorf("bare quote")
			}
			b.WriteByte(s[i])
			continue
		}
		i++
		switch {
		case i == len(s):
			return "", fmt.Errorf("trailing backslash")
		case s[i] == '\\':
			b.WriteByte('\\')
		case s[i] == 'n':
			b.WriteByte('\n')
		case s[i] == '"' && label:
			b.WriteByte('"')
		default:
			return "", fmt.Errorf("escape \\%c", s[i])
		}
	}
	return b.String(), nil
}

// seriesKey writes name and labels, in order of label name, with Go's
// quoting: `name{a="x"}`.
func seriesKey(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.Quote(labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// TestParserRejects checks that the test's parser is as strict as it
// says, so that its passing the package's output means something.
func TestParserRejects(t *testing.T) {
	ok := "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 2\n"
	if _, err := parseExposition(ok); err != nil {
		t.Fatalf("parseExposition(%q) = %v, want ok", ok, err)
	}
	for _, bad := range []string{
		"# HELP a_total A.\n# TYPE a_total counter\na_total 2",                                // no final line feed
		"# HELP a A.\n# TYPE a counter\na 2\n",                                                // counter without _total
		"a_total 1\n",                                                                         // no TYPE
		"# HELP a_total A.\n# TYPE a_total counter\na_total 1\na_total 2\n",                   // series twice
		"# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"\\t\"} 2\n",                   // unknown escape
		"# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"a\"b\"} 2\n",                  // bare quote
		"# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\",x=\"2\"} 2\n",             // label twice
		"# HELP a_total A.\n# TYPE a_total counter\na_total -1\n",                             // negative counter
		"# HELP a_total A.\n# TYPE a_total counter\na_total 1 1700000000\n",                   // timestamp
		"# HELP a_total A.\n# TYPE a_total counter\n\na_total 1\n",                            // blank line
		"# HELP a_total A.\n# TYPE a_total counter\n# HELP b B.\n# TYPE b gauge\na_total 1\n", // split family
		"# HELP a_total A.\n# TYPE a_total summary\na_total 1\n",                              // a type not written here
		"# HELP 1a A.\n# TYPE 1a gauge\n1a 1\n",                                               // bad name
	} {
		if _, err := parseExposition(bad); err == nil {
			t.Errorf("parseExposition(%q) = nil error, want one", bad)
		}
	}
}
