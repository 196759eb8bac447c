package benchrun

import (
	"strings"
	"testing"
)

// h2loadOK is h2load 1.52's report of a healthy timing-based run
// (-c 1 -m 100 -D 2) against an h2c server: 101 more responses than
// requests done, those answered after the duration.
const h2loadOK = `starting benchmark...
spawning thread #0: 1 total client(s). Timing-based test with 0s of warm-up time and 2s of main duration for measurements.
Warm-up started for thread #0.
progress: 100% of clients started
Warm-up phase is over for thread #0.
Main benchmark duration is started for thread #0.
Application protocol: h2c
Main benchmark duration is over for thread #0. Stopping all clients.
Stopped all clients for thread #0

finished in 2.00s, 37695.00 req/s, 1.26MB/s
requests: 75390 total, 75490 started, 75390 done, 75390 succeeded, 0 failed, 0 errored, 0 timeout
status codes: 75391 2xx, 0 3xx, 0 4xx, 0 5xx
traffic: 2.52MB (2638811) total, 294.58KB (301645) headers (space savings 95.06%), 957.10KB (980070) data
                     min         max         mean         sd        +/- sd
time for request:       47us     97.68ms      2.58ms      4.28ms    96.14%
time for connect:       68us        68us        68us         0us   100.00%
time to 1st byte:     1.31ms      1.31ms      1.31ms         0us   100.00%
req/s           :   37693.32    37693.32    37693.32        0.00   100.00%
`

func TestParseH2load(t *testing.T) {
	r, err := parseH2load(h2loadOK)
	if err != nil {
		t.Fatalf("parseH2load = %v", err)
	}
	if r.done != 75390 || r.responses != 75391 || r.rps != 37695 {
		t.Errorf("parseH2load = %+v, want 75390 done, 75391 responses, 37695 req/s", r)
	}
}

// TestParseH2loadFailures checks that every report of a run that went
// wrong fails the parse, saying what went wrong.
func TestParseH2loadFailures(t *testing.T) {
	edit := func(old, new string) string { return strings.Replace(h2loadOK, old, new, 1) }
	for _, tc := range []struct {
		name, out, want string
	}{
		// What h2load printed against a closed port (it exits 0).
		{"refused", edit("75390 done, 75390 succeeded, 0 failed, 0 errored", "0 done, 0 succeeded, 10 failed, 10 errored"), "10 requests failed"},
		{"errored", edit("0 errored", "3 errored"), "3 requests errored"},
		{"timeout", edit("0 timeout", "2 timeout"), "2 requests timeout"},
		{"4xx", edit("0 4xx", "10 4xx"), "10 responses of status 400 or more"},
		{"5xx", edit("0 5xx", "1 5xx"), "1 responses of status 400 or more"},
		{"http/1.1", edit("Application protocol: h2c", "Application protocol: http/1.1"), `"http/1.1", want h2c`},
		{"no protocol", edit("Application protocol: h2c\n", ""), "no protocol"},
		{"no rate", edit("37695.00 req/s", "37695.00 rq/s"), "no req/s"},
		{"no done", edit("75390 done, ", ""), "no count done"},
		{"bad count", edit("0 3xx", "x 3xx"), `invalid syntax`},
		{"nothing done", edit("75390 done", "0 done"), "completed no request"},
		{"empty", "", "no protocol"},
	} {
		_, err := parseH2load(tc.out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseH2load = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// FuzzParseH2load checks that no output, however mangled, panics the
// parser, and that a report it accepts has requests done at a rate.
func FuzzParseH2load(f *testing.F) {
	f.Add(h2loadOK)
	f.Add("Application protocol: h2c\nfinished in 1s, 1 req/s\nrequests: 1 done\nstatus codes: 1 2xx\n")
	f.Add("requests: , ,\nstatus codes: 1\n")
	f.Fuzz(func(t *testing.T, out string) {
		r, err := parseH2load(out)
		if err == nil && !(r.done > 0 && r.rps > 0) {
			t.Errorf("parseH2load(%q) = %+v, nil; want requests done", out, r)
		}
	})
}
