package benchrun

import (
	"slices"
	"strings"
	"testing"
)

func TestTargets(t *testing.T) {
	_, rows := testRows()
	type res struct {
		name, server  string
		met, known    bool
		measuredStart string
	}
	var got []res
	for _, tg := range Targets(rows) {
		got = append(got, res{tg.Name, tg.Server, tg.Met, tg.Known, tg.Measured})
	}
	want := []res{
		{"stream: 1 conn, 64 KiB writes (MB/s)", "aio", true, true, "1,700 MB/s = 1.04× stdnet (1,636), 1.16× gaio (1,468)"},
		{"stream: 1 conn, 64 KiB writes (MB/s)", "engine", false, true, "1,512 MB/s = 0.92× stdnet (1,636), 1.03× gaio (1,468)"},
		// cepoll is faster (80) but is no peer: gnet's 111 is the bar.
		{"conns: 8,192 conns × 1 KiB (time)", "aio", true, true, "95.0 ms/round = 0.86× gnet (111.0)"},
		{"conns: 8,192 conns × 1 KiB (time)", "engine", false, true, "105.0 ms/round = 0.95× gnet (111.0)"},
		// stdnet's 131.6k is no peer's: gnet's 130.0k is the bar.
		{"pingpong: 50 conns × 4 B (msg/s)", "aio", true, true, "150.0k msg/s = 1.15× gnet (130.0k)"},
		{"pingpong: 50 conns × 4 B (msg/s)", "engine", false, true, "140.0k msg/s = 1.08× gnet (130.0k)"},
		{"pingpong: 50 conns × 4 B (server CPU µs/msg)", "aio", true, true, "7.00 µs/msg = 0.98× cepoll (7.13)"},
		{"pingpong: 50 conns × 4 B (server CPU µs/msg)", "engine", false, true, "7.50 µs/msg = 1.05× cepoll (7.13)"},
		{"pingpong: 1,000 conns × 1 KiB (msg/s)", "aio", true, true, "140.0k msg/s = 1.17× gnet (119.6k)"},
		{"pingpong: 1,000 conns × 1 KiB (msg/s)", "engine", false, true, "120.0k msg/s = 1.00× gnet (119.6k)"},
		{"idle: 19,000 conns (server RSS per conn)", "aio", true, true, "240 B/conn"},
		{"idle: 19,000 conns (server RSS per conn)", "engine", false, true, "300 B/conn"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Targets:\n got %v\nwant %v", got, want)
	}
}

// TestTargetsUnknown drops rows a target needs.
func TestTargetsUnknown(t *testing.T) {
	_, rows := testRows()
	rows = slices.DeleteFunc(rows, func(r Row) bool {
		k := r.Case.Key()
		return (r.Server == "gaio" && k == "stream") || // stream needs gaio
			(k == "conns-8192" && !r.Gale) || // no peers
			(r.Server == "cepoll" && k == "pingpong-50x4") || // no C reference
			(r.Server == "engine" && k == "pingpong-1000x1024") || // gale row missing
			k == "idle-19000"
	})
	for _, tg := range Targets(rows) {
		wantKnown := tg.Name == "pingpong: 50 conns × 4 B (msg/s)" ||
			(tg.Name == "pingpong: 1,000 conns × 1 KiB (msg/s)" && tg.Server == "aio")
		if tg.Known != wantKnown || (!tg.Known && tg.Met) {
			t.Errorf("%s on %s: Known %v, Met %v (%s), want Known %v", tg.Name, tg.Server, tg.Known, tg.Met, tg.Measured, wantKnown)
		}
	}
}

// TestTargetsBoundary: a figure exactly at the goal meets it.
func TestTargetsBoundary(t *testing.T) {
	c := Case{Scenario: "conns", Conns: 8192, Size: connsSize}
	rows := []Row{
		{Case: c, Server: "aio", Gale: true, Median: 90},
		{Case: c, Server: "gnet", Median: 100},
		{Case: c, Server: "evio", Median: 120},
	}
	ts := Targets(rows)
	i := slices.IndexFunc(ts, func(t Target) bool { return t.Name == "conns: 8,192 conns × 1 KiB (time)" })
	if i < 0 || !ts[i].Known || !ts[i].Met {
		t.Errorf("Targets(90 ms against a best peer's 100) = %+v, want known and met", ts)
	}
	if want := len(designTargets) - 3; len(ts) != want { // the io_uring targets apply to -io_uring servers only
		t.Errorf("Targets with one epoll gale server = %d targets, want %d", len(ts), want)
	}
}

// TestTargetsURing: the io_uring targets compare a -io_uring server with
// the same server on epoll, at the boundary included.
func TestTargetsURing(t *testing.T) {
	pp := Case{Scenario: "pingpong", Conns: 50, Size: 4}
	rows := []Row{
		{Case: pp, Server: "engine", Gale: true, CPUPerMsg: 10},
		{Case: pp, Server: "engine-io_uring", Gale: true, CPUPerMsg: 8},
		{Case: pp, Server: "aio", Gale: true, CPUPerMsg: 10},
		{Case: pp, Server: "aio-io_uring", Gale: true, CPUPerMsg: 8.5},
	}
	met := map[string]bool{}
	for _, tg := range Targets(rows) {
		if strings.HasPrefix(tg.Name, "io_uring: 50 conns") {
			if !tg.Known {
				t.Errorf("target for %s unknown: %s", tg.Server, tg.Measured)
			}
			met[tg.Server] = tg.Met
		}
	}
	if len(met) != 2 || !met["engine-io_uring"] || met["aio-io_uring"] {
		t.Errorf("io_uring CPU targets met = %v, want engine-io_uring (0.8×) met and aio-io_uring (0.85×) not", met)
	}
}

func TestTargetsNoGale(t *testing.T) {
	_, rows := testRows()
	for i := range rows {
		rows[i].Gale = false
	}
	if ts := Targets(rows); len(ts) != 0 {
		t.Errorf("Targets without gale rows = %v, want none", ts)
	}
}
