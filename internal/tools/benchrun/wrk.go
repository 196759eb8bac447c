package benchrun

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// wrkJob is one run of wrk (github.com/wg/wrk), the HTTP scenarios' load
// generator: a process of its own, so that it holds its connections'
// descriptors and CPU time apart from the suite's.
type wrkJob struct {
	url   string        // what every request asks for
	conns int           // wrk -c: keep-alive connections
	d     time.Duration // wrk -d, rounded up to whole seconds (wrk takes no less)
	// script, if not empty, is a Lua script for wrk -s (http-upload's
	// POST), written to a temporary file for the run.
	script string
}

// wrkThreads is wrk's -t: one thread per core of the machine the suite
// is written for (2), so that wrk can load the server as hard as it can
// answer without taking more than its share of the machine.
const wrkThreads = 2

// wrkReport is what wrk measured.
type wrkReport struct {
	requests int64         // completed: "N requests in ..."
	rps      float64       // "Requests/sec"
	p50, p99 float64       // latency µs, from --latency's distribution
	cpu      time.Duration // wrk's own user and system time
}

// wrkTimeout is wrk --timeout: a request unanswered this long counts as
// a socket error, which fails the run.
const wrkTimeout = "10s"

// errNoWrk is the error when wrk is not installed.
var errNoWrk = errors.New("wrk not found in PATH; the HTTP scenarios need it (apt-get install wrk)")

// run runs wrk with -t wrkThreads (fewer if there are fewer connections)
// and --latency, and parses its report. A request answered with a status
// of 400 or more (wrk's "Non-2xx or 3xx responses") or a socket error
// fails the run.
func (j wrkJob) run() (wrkReport, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return wrkReport{}, errNoWrk
	}
	secs := max(1, int(math.Ceil(j.d.Seconds())))
	args := []string{"-t", strconv.Itoa(min(wrkThreads, j.conns)), "-c", strconv.Itoa(j.conns),
		"-d", strconv.Itoa(secs) + "s", "--timeout", wrkTimeout, "--latency"}
	if j.script != "" {
		path, err := writeScript(j.script)
		if err != nil {
			return wrkReport{}, err
		}
		defer os.Remove(path)
		args = append(args, "-s", path)
	}
	cmd := exec.Command(bin, append(args, j.url)...)
	var out bytes.Buffer
	var stderr tailWriter
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return wrkReport{}, fmt.Errorf("wrk %s: %w; it said: %q %q", strings.Join(args, " "), err, out.String(), stderr.String())
	}
	r, err := parseWrk(out.String())
	if err != nil {
		return wrkReport{}, fmt.Errorf("wrk %s: %w", strings.Join(args, " "), err)
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

// writeScript writes a Lua script to a new temporary file and returns
// its path, which the caller removes.
func writeScript(text string) (string, error) {
	f, err := os.CreateTemp("", "galebench-wrk-*.lua")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(text)
	if err = errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// parseWrk reads wrk 4's report, printed with --latency:
//
//	  Latency Distribution
//	     50%  103.00us
//	     99%    4.42ms
//	  83033 requests in 1.10s, 9.74MB read
//	  Socket errors: connect 0, read 1, write 0, timeout 0
//	  Non-2xx or 3xx responses: 12
//	Requests/sec:  75477.20
//
// The last two lines of errors appear only when a count is not zero;
// either fails the parse, as do missing figures and zero requests.
func parseWrk(out string) (wrkReport, error) {
	var r wrkReport
	var haveReqs, haveRPS bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		var err error
		switch {
		case strings.HasPrefix(line, "Socket errors:"), strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			return r, fmt.Errorf("wrk reports %q", line)
		case strings.HasPrefix(line, "Requests/sec:") && len(f) == 2:
			r.rps, err = strconv.ParseFloat(f[1], 64)
			haveRPS = true
		case len(f) >= 3 && f[1] == "requests" && f[2] == "in":
			r.requests, err = strconv.ParseInt(f[0], 10, 64)
			haveReqs = true
		case len(f) == 2 && f[0] == "50%":
			r.p50, err = parseWrkTime(f[1])
		case len(f) == 2 && f[0] == "99%":
			r.p99, err = parseWrkTime(f[1])
		}
		if err != nil {
			return r, fmt.Errorf("wrk's line %q: %w", line, err)
		}
	}
	switch {
	case !haveReqs || !haveRPS || r.p99 == 0:
		return r, fmt.Errorf("no request count, Requests/sec or 99%% latency in wrk's report %q", out)
	case r.requests == 0 || r.rps == 0:
		return r, fmt.Errorf("wrk completed no request: %q", out)
	}
	return r, nil
}

// wrkTimeUnits are the units of wrk's times, in µs.
var wrkTimeUnits = []struct {
	suffix string
	us     float64
}{{"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}}

// parseWrkTime parses a time as wrk prints it, such as 103.00us, 4.42ms
// or 1.02s, into µs.
func parseWrkTime(s string) (float64, error) {
	for _, u := range wrkTimeUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			x, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return 0, err
			}
			return x * u.us, nil
		}
	}
	return 0, fmt.Errorf("time %q without a unit", s)
}
