package benchrun

import (
	"slices"
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
	c := Case{"conns", 8192, connsSize}
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
	if len(ts) != len(designTargets) {
		t.Errorf("Targets with one gale server = %d targets, want %d", len(ts), len(designTargets))
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
