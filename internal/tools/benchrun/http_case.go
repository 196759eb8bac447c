package benchrun

import (
	"fmt"
	"strings"
)

// httpPrefix starts the names of the HTTP scenarios, which run only
// against HTTP servers.
const httpPrefix = "http-"

// httpScenarios are the HTTP scenarios, for -scenarios http.
const httpScenarios = "http-hello,http-64k,http-upload,http-idle"

// HTTP reports whether c is an HTTP case: its server speaks HTTP/1.1
// and its client is wrk (http-idle's, this process).
func (c Case) HTTP() bool { return strings.HasPrefix(c.Scenario, httpPrefix) }

// httpTitle is Title for an HTTP case.
func (c Case) httpTitle() string {
	conns := count(c.Conns) + " keep-alive conns"
	switch c.Scenario {
	case "http-hello":
		return fmt.Sprintf("%s: wrk -t%d, %s, GET of %q", c.Scenario, wrkThreads, conns, HelloBody)
	case "http-64k":
		return fmt.Sprintf("%s: wrk -t%d, %s, GET of a %s body", c.Scenario, wrkThreads, conns, size(c.Size))
	case "http-upload":
		return fmt.Sprintf("%s: wrk -t%d, %s, POST of a %s body read whole", c.Scenario, wrkThreads, conns, size(c.Size))
	}
	return fmt.Sprintf("%s: %s idle after one GET each", c.Scenario, conns)
}

// httpUnit is Unit for an HTTP case: requests per second for small
// answers, megabytes of body per second for large bodies either way.
func (c Case) httpUnit() string {
	switch c.Scenario {
	case "http-hello":
		return "req/s"
	case "http-64k", "http-upload":
		return "MB/s"
	}
	return "B/conn"
}

// parseHTTPScenario expands one HTTP scenario name into its cases, or
// reports that sc is none.
func parseHTTPScenario(sc string, l Lists) ([]Case, bool, error) {
	var cases []Case
	var err error
	switch sc {
	case "http-hello":
		cases, err = parseCounts(sc, l.HTTPHello, len(HelloBody))
	case "http-64k":
		cases, err = parseCounts(sc, l.HTTPBulk, httpBulkSize)
	case "http-upload":
		cases, err = parseCounts(sc, l.HTTPBulk, httpUploadSize)
	case "http-idle":
		cases, err = parseCounts(sc, l.HTTPIdle, len(HelloBody))
	default:
		return nil, false, nil
	}
	return cases, true, err
}
