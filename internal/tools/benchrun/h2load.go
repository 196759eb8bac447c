package benchrun

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// h2loadJob is one run of h2load (nghttp2's HTTP/2 load generator,
// Debian's nghttp2-client), the h2-hello scenario's: a process of its
// own, as wrk is, so that it holds its connections and CPU time apart
// from the suite's. To an http:// URI it speaks h2c by prior knowledge
// (its -p defaults to h2c): the connection preface first, no Upgrade.
type h2loadJob struct {
	url     string        // what every request asks for
	conns   int           // h2load -c: connections
	streams int           // h2load -m: concurrent streams per connection
	d       time.Duration // h2load -D: the measured duration
}

// h2loadReport is what h2load measured.
type h2loadReport struct {
	done      int64         // requests completed within the duration: "requests: ... N done"
	responses int64         // responses received in all, the status codes' total
	rps       float64       // "finished in ..., N req/s"
	cpu       time.Duration // h2load's own user and system time
}

// h2loadSlack is how much longer than its duration an h2load run may
// take (connecting, stopping) before it is killed: a server that stops
// answering fails the run rather than hanging the suite.
const h2loadSlack = 30 * time.Second

// errNoH2load is the error when h2load is not installed.
var errNoH2load = errors.New("h2load not found in PATH; the h2-hello scenario needs it (apt-get install nghttp2-client)")

// h2loadThreads is h2load's -t for conns connections: wrkThreads, or
// fewer if there are fewer connections (h2load refuses more threads
// than clients).
func h2loadThreads(conns int) int { return min(wrkThreads, conns) }

// run runs h2load for j.d, killed if it takes h2loadSlack longer, and
// parses its report. A failed, errored or timed-out request, a status of
// 400 or more, or a protocol other than h2c fails the run (h2load itself
// exits 0 on all of them).
func (j h2loadJob) run() (h2loadReport, error) {
	bin, err := exec.LookPath("h2load")
	if err != nil {
		return h2loadReport{}, errNoH2load
	}
	ms := max(1, j.d.Milliseconds())
	args := []string{"-c", strconv.Itoa(j.conns), "-m", strconv.Itoa(j.streams),
		"-t", strconv.Itoa(h2loadThreads(j.conns)), "-D", strconv.FormatInt(ms, 10) + "ms", j.url}
	ctx, cancel := context.WithTimeout(context.Background(), j.d+h2loadSlack)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	var stderr tailWriter
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return h2loadReport{}, fmt.Errorf("h2load %s: %w; it said: %q %q", strings.Join(args, " "), err, lastBytes(out.String()), stderr.String())
	}
	r, err := parseH2load(out.String())
	if err != nil {
		return h2loadReport{}, fmt.Errorf("h2load %s: %w", strings.Join(args, " "), err)
	}
	r.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

// lastBytes returns the last tailMax bytes of s, for an error message.
func lastBytes(s string) string { return s[max(0, len(s)-tailMax):] }

// parseH2load reads the report h2load 1.52 prints:
//
//	Application protocol: h2c
//	finished in 2.00s, 37695.00 req/s, 1.26MB/s
//	requests: 75390 total, 75490 started, 75390 done, 75390 succeeded, 0 failed, 0 errored, 0 timeout
//	status codes: 75391 2xx, 0 3xx, 0 4xx, 0 5xx
//
// A failed, errored or timed-out request, a 4xx or 5xx status, a
// protocol other than h2c, a missing line and no request done all fail
// the parse.
func parseH2load(out string) (h2loadReport, error) {
	var r h2loadReport
	var have struct{ proto, finished, requests, status bool }
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var err error
		switch {
		case strings.HasPrefix(line, "Application protocol:"):
			have.proto = true
			if p := strings.TrimSpace(strings.TrimPrefix(line, "Application protocol:")); p != "h2c" {
				return r, fmt.Errorf("h2load spoke %q, want h2c", p)
			}
		case strings.HasPrefix(line, "finished in "):
			r.rps, err = h2loadRate(line)
			have.finished = true
		case strings.HasPrefix(line, "requests:"):
			r.done, err = h2loadRequests(line)
			have.requests = true
		case strings.HasPrefix(line, "status codes:"):
			r.responses, err = h2loadStatuses(line)
			have.status = true
		}
		if err != nil {
			return r, fmt.Errorf("h2load's line %q: %w", line, err)
		}
	}
	switch {
	case !have.proto || !have.finished || !have.requests || !have.status:
		return r, fmt.Errorf("no protocol, finished, requests or status codes line in h2load's report %q", lastBytes(out))
	case r.done <= 0 || !(r.rps > 0): // NaN too
		return r, fmt.Errorf("h2load completed no request: %q", lastBytes(out))
	}
	return r, nil
}

// h2loadRate reads the requests per second of "finished in 2.00s,
// 37695.00 req/s, 1.26MB/s".
func h2loadRate(line string) (float64, error) {
	for _, f := range strings.Split(line, ",") {
		if num, ok := strings.CutSuffix(strings.TrimSpace(f), " req/s"); ok {
			return strconv.ParseFloat(num, 64)
		}
	}
	return 0, errors.New("no req/s")
}

// h2loadRequests reads the requests done of "requests: 10 total, 10
// started, 10 done, 10 succeeded, 0 failed, 0 errored, 0 timeout", and
// fails if any request failed, errored or timed out.
func h2loadRequests(line string) (int64, error) {
	n, err := h2loadCounts(strings.TrimPrefix(line, "requests:"))
	if err != nil {
		return 0, err
	}
	for _, bad := range []string{"failed", "errored", "timeout"} {
		if n[bad] != 0 {
			return 0, fmt.Errorf("%d requests %s", n[bad], bad)
		}
	}
	done, ok := n["done"]
	if !ok {
		return 0, errors.New("no count done")
	}
	return done, nil
}

// h2loadStatuses reads the total of "status codes: 75391 2xx, 0 3xx, 0
// 4xx, 0 5xx", and fails on any status of 400 or more.
func h2loadStatuses(line string) (int64, error) {
	n, err := h2loadCounts(strings.TrimPrefix(line, "status codes:"))
	if err != nil {
		return 0, err
	}
	if bad := n["4xx"] + n["5xx"]; bad != 0 {
		return 0, fmt.Errorf("%d responses of status 400 or more", bad)
	}
	return n["2xx"] + n["3xx"], nil
}

// h2loadCounts reads "N name, M other, ..." into a map by name.
func h2loadCounts(s string) (map[string]int64, error) {
	n := map[string]int64{}
	for _, item := range strings.Split(s, ",") {
		f := strings.Fields(item)
		if len(f) != 2 {
			return nil, fmt.Errorf("count %q, want N NAME", strings.TrimSpace(item))
		}
		x, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return nil, err
		}
		n[f[1]] = x
	}
	return n, nil
}
