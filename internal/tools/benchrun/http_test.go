package benchrun

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestHTTPSmoke runs every HTTP scenario against std-http and gale's
// HTTP servers, briefly: one second of wrk per load
// case, the least it runs. Without wrk it is skipped, unless CI=1, where
// a missing wrk fails it.
func TestHTTPSmoke(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		if os.Getenv("CI") == "1" {
			t.Fatalf("CI=1 and %v", errNoWrk)
		}
		t.Skip(errNoWrk)
	}
	cases, err := ParseCases("http", Lists{HTTPHello: "4", HTTPBulk: "4", HTTPIdle: "20,50"})
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, s := range append(HTTPServers(), GaleHTTPServers(serveHTTP1)...) {
		servers = append(servers, s.Name)
	}
	dir := t.TempDir()
	o := Options{Duration: 300 * time.Millisecond, Reps: 1, Servers: servers,
		Cases: cases, Out: dir, Command: "benchrun.test"}
	if err := Run(testServers(), o); err != nil {
		t.Fatalf("Run = %v", err)
	}
	_, recs, err := ReadResults(dir + "/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cases) * len(servers); len(recs) != want {
		t.Errorf("results.jsonl holds %d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		if r.Err != "" || r.Value <= 0 || r.Msgs <= 0 {
			t.Errorf("record %+v: want a positive figure and no error", r)
		}
		if r.Case.Scenario != "http-idle" && (r.P99 <= 0 || r.ClientCPU <= 0) {
			t.Errorf("%s on %s: p99 %v µs, client CPU %v s; want wrk's latency and CPU", r.Case.Key(), r.Server, r.P99, r.ClientCPU)
		}
	}
	for _, f := range []string{"report.md", "http-hello-4.svg", "http-upload-4.svg"} {
		if _, err := os.Stat(dir + "/" + f); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}
