package benchrun

import (
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the suite's server child: Run
// re-executes os.Executable with -serve, as the commands do.
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "-serve" {
		Main(Config{Command: "benchrun.test", Servers: testServers()})
	}
	os.Exit(m.Run())
}

// TestSuiteSmoke runs every scenario against every server, briefly: each
// echoed byte is verified, so a broken server or scenario fails here
// rather than in a long benchmark run. It writes the results, the report
// and the charts, and re-renders them from the results.
func TestSuiteSmoke(t *testing.T) {
	cases, err := ParseCases("stream,pingpong,conns,idle", Lists{Pingpong: "8x4,4x1024", Conns: "20,50", Idle: "20,50"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Duration: 300 * time.Millisecond, Reps: 1, Servers: []string{"aio", "engine", "stdnet"},
		Cases: cases, Out: dir, Command: "benchrun.test"}
	if err := Run(testServers(), o); err != nil {
		t.Fatalf("Run = %v", err)
	}
	meta, recs, err := ReadResults(dir + "/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if want := len(cases) * 3; len(recs) != want {
		t.Errorf("results.jsonl holds %d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		if r.Err != "" || r.Value <= 0 || r.Msgs <= 0 {
			t.Errorf("record %+v: want a positive figure and no error", r)
		}
	}
	if strings.Join(meta.Gale, ",") != "aio,engine" {
		t.Errorf("meta.Gale = %v, want aio and engine", meta.Gale)
	}
	if err := Rerender(dir); err != nil {
		t.Errorf("Rerender = %v", err)
	}
}

// TestTLSSmoke runs every TLS scenario against the TLS servers, briefly,
// with the charts of two tls-idle counts, and checks that the handshakes
// were counted as full ones with their latency.
func TestTLSSmoke(t *testing.T) {
	cases, err := ParseCases("tls", Lists{TLSPingpong: "4x1024", Handshake: "4", Idle: "20,50"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Duration: 300 * time.Millisecond, Reps: 1, Servers: []string{"engine-tls", "std-tls"},
		Cases: cases, Out: dir, Command: "benchrun.test"}
	if err := Run(testServers(), o); err != nil {
		t.Fatalf("Run = %v", err)
	}
	_, recs, err := ReadResults(dir + "/results.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 * 2; len(recs) != want {
		t.Errorf("results.jsonl holds %d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		if r.Err != "" || r.Value <= 0 || r.Msgs <= 0 {
			t.Errorf("record %+v: want a positive figure and no error", r)
		}
		if r.Case.Scenario == "tls-handshake" && r.P50 <= 0 {
			t.Errorf("tls-handshake on %s: p50 = %v, want the connections' latency", r.Server, r.P50)
		}
	}
	for _, f := range []string{"report.md", "tls-idle-scaling.svg", "tls-handshake-4.svg"} {
		if _, err := os.Stat(dir + "/" + f); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// testServers adds to gale's a broken server: it closes every connection
// it accepts.
func testServers() []Server {
	closer := Server{Name: "closer", Serve: func(ln net.Listener, ready func(net.Addr)) error {
		ready(ln.Addr())
		for {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			c.Close()
		}
	}}
	return slices.Concat(GaleServers(), TLSServers(), HTTPServers(), GaleHTTPServers(serveHTTP1),
		H2Servers(), GaleH2Servers(serveH2), []Server{closer})
}

// TestFailureRecorded checks that a server which cannot serve a case is
// recorded as failed, that Run reports it, that the server skips the rest
// of the case, and that the others are still measured.
func TestFailureRecorded(t *testing.T) {
	dir := t.TempDir()
	o := Options{Duration: 100 * time.Millisecond, Reps: 2, Servers: []string{"closer", "stdnet"},
		Cases: []Case{{Scenario: "pingpong", Conns: 2, Size: 4}}, Out: dir}
	err := Run(testServers(), o)
	if err == nil || !strings.Contains(err.Error(), "pingpong-2x4 on closer, run 1") {
		t.Fatalf("Run = %v, want the failure of closer's first run", err)
	}
	_, recs, rerr := ReadResults(dir + "/results.jsonl")
	if rerr != nil {
		t.Fatal(rerr)
	}
	var failed, ok int
	for _, r := range recs {
		switch {
		case r.Server == "closer" && r.Err != "":
			failed++
		case r.Server == "stdnet" && r.Err == "":
			ok++
		default:
			t.Errorf("unexpected record %+v", r)
		}
	}
	if failed != 1 || ok != 2 {
		t.Errorf("%d failed closer records and %d stdnet ones, want 1 and 2", failed, ok)
	}
}

func TestBadNames(t *testing.T) {
	o := Options{Duration: time.Millisecond, Reps: 1, Servers: []string{"nosuch"}, Cases: []Case{{Scenario: "stream"}}}
	if err := Run(GaleServers(), o); err == nil {
		t.Error("Run with an unknown server = nil, want an error")
	}
	for _, tc := range []struct {
		scenarios string
		l         Lists
	}{
		{"nosuch", Lists{}}, {"pingpong", Lists{Pingpong: "50"}}, {"conns", Lists{Conns: "x"}}, {"", Lists{}},
		{"tls-pingpong", Lists{TLSPingpong: "0x4"}}, {"tls-handshake", Lists{Handshake: "-1"}},
	} {
		if _, err := ParseCases(tc.scenarios, tc.l); err == nil {
			t.Errorf("ParseCases(%q, %+v) = nil error, want one", tc.scenarios, tc.l)
		}
	}
	// A TLS scenario needs a TLS server, and a TLS server a TLS scenario.
	for _, tc := range []struct {
		server, scenario string
	}{{"engine", "tls-stream"}, {"engine-tls", "stream"}} {
		o := Options{Duration: time.Millisecond, Reps: 1, Servers: []string{tc.server}, Cases: []Case{{Scenario: tc.scenario}}}
		if err := Run(testServers(), o); err == nil || !strings.Contains(err.Error(), tc.server) && !strings.Contains(err.Error(), tc.scenario) {
			t.Errorf("Run(%s on %s) = %v, want an error naming the mismatch", tc.scenario, tc.server, err)
		}
	}
}

// TestStartChild starts a server child as the soak does: it accepts on
// its address, answers the goroutine count, and stops when asked.
func TestStartChild(t *testing.T) {
	s, err := find(GaleServers(), "engine")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := StartChild(s)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", ch.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if n, err := ch.Goroutines(); err != nil || n < 2 {
		t.Errorf("Goroutines() = %d, %v; want at least 2 (the server and the command reader)", n, err)
	}
	stacks := t.TempDir() + "/stacks.txt"
	if err := ch.WriteStacks(stacks); err != nil {
		t.Errorf("WriteStacks = %v", err)
	}
	if b, err := os.ReadFile(stacks); err != nil || !strings.Contains(string(b), "goroutine ") {
		t.Errorf("the stacks file holds %.100q, %v; want goroutine stacks", b, err)
	}
	if ch.PID() <= 0 {
		t.Errorf("PID() = %d", ch.PID())
	}
	if err := ch.Stop(); err != nil {
		t.Errorf("Stop() = %v", err)
	}
	if _, err := ch.Goroutines(); err == nil {
		t.Error("Goroutines() after Stop = nil error, want one")
	}
}
