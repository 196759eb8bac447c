package benchrun

import (
	"strings"
	"testing"
)

// wrkOK is wrk 4.1's report of a healthy run, as printed with --latency.
const wrkOK = `Running 1s test @ http://127.0.0.1:18080/
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   428.23us    0.95ms  11.30ms   90.49%
    Req/Sec    37.99k     4.42k   46.84k    68.18%
  Latency Distribution
     50%  103.00us
     75%  192.00us
     90%    1.29ms
     99%    4.42ms
  83033 requests in 1.10s, 9.74MB read
Requests/sec:  75477.20
Transfer/sec:      8.85MB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkOK)
	if err != nil {
		t.Fatalf("parseWrk = %v", err)
	}
	if r.requests != 83033 || r.rps != 75477.20 || r.p50 != 103 || r.p99 != 4420 {
		t.Errorf("parseWrk = %+v, want 83033 requests, 75477.20/s, p50 103 µs, p99 4420 µs", r)
	}
}

// TestParseWrkFailures checks that every report of a run that went
// wrong fails the parse, with wrk's own words where it has some.
func TestParseWrkFailures(t *testing.T) {
	for _, tc := range []struct {
		name, out, want string
	}{
		{"non-2xx", strings.Replace(wrkOK, "Requests/sec", "  Non-2xx or 3xx responses: 12\nRequests/sec", 1), "Non-2xx or 3xx responses: 12"},
		{"socket errors", strings.Replace(wrkOK, "Requests/sec", "  Socket errors: connect 0, read 3, write 0, timeout 0\nRequests/sec", 1), "read 3"},
		{"no latency", strings.Replace(wrkOK, "     99%    4.42ms\n", "", 1), "99% latency"},
		{"no rate", strings.Replace(wrkOK, "Requests/sec:  75477.20\n", "", 1), "Requests/sec"},
		{"no requests", strings.Replace(strings.Replace(wrkOK, "83033 requests", "0 requests", 1), "75477.20", "0.00", 1), "no request"},
		{"bad time", strings.Replace(wrkOK, "4.42ms", "4.42", 1), "without a unit"},
		{"empty", "", "no request count"},
	} {
		_, err := parseWrk(tc.out)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: parseWrk = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestParseWrkTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
	}{{"103.00us", 103}, {"4.42ms", 4420}, {"1.02s", 1.02e6}, {"2.00m", 120e6}} {
		if got, err := parseWrkTime(tc.in); err != nil || got != tc.want {
			t.Errorf("parseWrkTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
