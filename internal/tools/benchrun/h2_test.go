package benchrun

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
)

// serveH2 is gale's HTTP/2 server for GaleH2Servers in the tests: the
// same lines as cmd/galebench's h2.go.
func serveH2(ln net.Listener, h http.Handler) error {
	srv := &httpd.Server{Handler: h, Protocols: H2Protocols()}
	return srv.Serve(ln)
}

// TestH2Smoke runs both HTTP/2 scenarios against std-h2 and gale-h2,
// briefly: h2-hello in two shapes, h2-idle at two counts (its idle
// connections speak the frames themselves, so a broken exchange fails
// here). Without h2load it is skipped, unless CI=1, where a missing
// h2load fails it.
func TestH2Smoke(t *testing.T) {
	if _, err := exec.LookPath("h2load"); err != nil {
		if os.Getenv("CI") == "1" {
			t.Fatalf("CI=1 and %v", errNoH2load)
		}
		t.Skip(errNoH2load)
	}
	cases, err := ParseCases("h2", Lists{H2Hello: "1x8,4x2", H2Idle: "20,50"})
	if err != nil {
		t.Fatal(err)
	}
	servers := []string{"gale-h2", "std-h2"}
	dir := t.TempDir()
	o := Options{Duration: 300 * time.Millisecond, Reps: 1, Servers: servers, Cases: cases, Out: dir, Command: "benchrun.test"}
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
		if r.Case.Scenario == "h2-hello" && (r.ServerCPU <= 0 || r.ClientCPU <= 0) {
			t.Errorf("%s on %s: server CPU %v s, client CPU %v s; want both", r.Case.Key(), r.Server, r.ServerCPU, r.ClientCPU)
		}
	}
	for _, f := range []string{"report.md", "h2-hello-1x8.svg", "h2-idle-50.svg"} {
		if _, err := os.Stat(dir + "/" + f); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
}

// TestH2Cases checks the HTTP/2 cases' names and parsing.
func TestH2Cases(t *testing.T) {
	cases, err := ParseCases("h2", Lists{H2Hello: "1x100,500x1", H2Idle: "10000"})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range cases {
		keys = append(keys, c.Key()+" "+c.Unit()+" "+c.Reference())
	}
	want := []string{"h2-hello-1x100 req/s std-h2", "h2-hello-500x1 req/s std-h2", "h2-idle-10000 B/conn std-h2"}
	if len(keys) != len(want) {
		t.Fatalf("ParseCases(h2) = %q, want %q", keys, want)
	}
	for i := range want {
		if keys[i] != want[i] {
			t.Errorf("case %d = %q, want %q", i, keys[i], want[i])
		}
	}
	for _, bad := range []string{"50", "0x10", "10x0", "ax1"} {
		if _, err := ParseCases("h2-hello", Lists{H2Hello: bad}); err == nil {
			t.Errorf("ParseCases(h2-hello, %q) = nil error, want one", bad)
		}
	}
}

// TestHPACKInt checks the integer encoding against RFC 7541's examples
// (C.1.1 to C.1.3).
func TestHPACKInt(t *testing.T) {
	for _, tc := range []struct {
		flags byte
		n     uint
		x     uint64
		want  []byte
	}{
		{0, 5, 10, []byte{0x0a}}, {0, 5, 1337, []byte{0x1f, 0x9a, 0x0a}}, {0, 8, 42, []byte{0x2a}},
		{0, 7, 127, []byte{0x7f, 0x00}}, {0x40, 6, 58, []byte{0x7a}}, {0x40, 6, 63, []byte{0x7f, 0x00}},
	} {
		if got := appendHPACKInt(nil, tc.flags, tc.n, tc.x); !bytes.Equal(got, tc.want) {
			t.Errorf("appendHPACKInt(%#x, %d-bit prefix, %d) = %x, want %x", tc.flags, tc.n, tc.x, got, tc.want)
		}
	}
}

// TestH2HelloBlock checks the idle clients' header block byte by byte
// (RFC 7541 §6.1, §6.2.1, §6.2.2); TestH2Smoke's h2-idle has both
// servers decode it.
func TestH2HelloBlock(t *testing.T) {
	got := h2HelloBlock("a:1")
	want := []byte{0x82, 0x86, 0x04, 0x01, '/', 0x41, 0x03, 'a', ':', '1', 0x7a, 0x09}
	want = append(want, "galebench"...)
	if !bytes.Equal(got, want) {
		t.Errorf("h2HelloBlock(a:1) = %x, want %x", got, want)
	}
}

// TestH2Targets checks the HTTP/2 targets against std-h2's rows: met,
// missed, and not measured without the reference.
func TestH2Targets(t *testing.T) {
	hello := Case{Scenario: "h2-hello", Conns: 1, Size: len(HelloBody), Streams: 100}
	idle := Case{Scenario: "h2-idle", Conns: 10000, Size: len(HelloBody)}
	lone := Case{Scenario: "h2-hello", Conns: 500, Size: len(HelloBody), Streams: 1}
	rows := []Row{
		{Case: hello, Server: "gale-h2", Gale: true, Median: 50000, CPUPerMsg: 20},
		{Case: hello, Server: "std-h2", Median: 34200, CPUPerMsg: 34.6},
		{Case: idle, Server: "gale-h2", Gale: true, Median: 3500},
		{Case: idle, Server: "std-h2", Median: 28400},
		{Case: lone, Server: "gale-h2", Gale: true, Median: 30000, CPUPerMsg: 30},
	}
	var got []string
	for _, tg := range H2Targets(rows) {
		got = append(got, fmt.Sprintf("%s: known %v, met %v", tg.Name, tg.Known, tg.Met))
	}
	want := []string{
		"h2-hello: 1 conn × 100 streams (req/s): known true, met true",
		"h2-hello: 1 conn × 100 streams (server CPU µs/req): known true, met true",
		"h2-idle: 10,000 conns (server RSS per conn): known true, met false",
		"h2-hello: 500 conns × 1 stream (req/s): known false, met false",
		"h2-hello: 500 conns × 1 stream (server CPU µs/req): known false, met false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("H2Targets =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
