package benchrun

import (
	"fmt"
	"strconv"
	"strings"
)

// h2Prefix starts the names of the HTTP/2 scenarios, which run only
// against HTTP/2 servers.
const h2Prefix = "h2-"

// h2Scenarios are the HTTP/2 scenarios, for -scenarios h2.
const h2Scenarios = "h2-hello,h2-idle"

// H2 reports whether c is an HTTP/2 case: its server speaks h2c and its
// client is h2load (h2-idle's, this process).
func (c Case) H2() bool { return strings.HasPrefix(c.Scenario, h2Prefix) }

// h2Title is Title for an HTTP/2 case.
func (c Case) h2Title() string {
	if c.Scenario == "h2-hello" {
		return fmt.Sprintf("%s: h2load -t%d, %s × %s, GET of %q",
			c.Scenario, h2loadThreads(c.Conns), plural(c.Conns, "h2c conn"), plural(c.Streams, "stream"), HelloBody)
	}
	return fmt.Sprintf("%s: %s idle after one GET each", c.Scenario, plural(c.Conns, "h2c conn"))
}

// plural writes n things: 1 stream, 1,000 streams.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return count(n) + " " + thing + "s"
}

// h2Unit is Unit for an HTTP/2 case.
func (c Case) h2Unit() string {
	if c.Scenario == "h2-hello" {
		return "req/s"
	}
	return "B/conn"
}

// parseH2Scenario expands one HTTP/2 scenario name into its cases, or
// reports that sc is none.
func parseH2Scenario(sc string, l Lists) ([]Case, bool, error) {
	switch sc {
	case "h2-hello":
		cases, err := parseStreams(sc, l.H2Hello)
		return cases, true, err
	case "h2-idle":
		cases, err := parseCounts(sc, l.H2Idle, len(HelloBody))
		return cases, true, err
	}
	return nil, false, nil
}

// parseStreams makes an h2-hello case per CONNSxSTREAMS item of list.
func parseStreams(sc, list string) ([]Case, error) {
	var cases []Case
	for _, item := range splitList(list) {
		c, m, ok := strings.Cut(item, "x")
		n, err1 := strconv.Atoi(c)
		streams, err2 := strconv.Atoi(m)
		if !ok || err1 != nil || err2 != nil || n < 1 || streams < 1 {
			return nil, fmt.Errorf("bad %s case %q, want CONNSxSTREAMS such as 50x10", sc, item)
		}
		cases = append(cases, Case{Scenario: sc, Conns: n, Size: len(HelloBody), Streams: streams})
	}
	return cases, nil
}
