package main

import (
	"os"
	"testing"
	"time"
)

// TestMain lets the test binary serve as galebench's server child: the
// suite re-executes os.Executable with -serve, as the command does.
func TestMain(m *testing.M) {
	if len(os.Args) >= 3 && os.Args[1] == "-serve" {
		if err := runServer(os.Args[2], ""); err != nil {
			os.Stderr.WriteString("galebench server: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSuiteSmoke runs every scenario against every server, briefly: each
// echoed byte is verified, so a broken server or scenario fails here
// rather than in a long benchmark run.
func TestSuiteSmoke(t *testing.T) {
	o := options{
		duration:  300 * time.Millisecond,
		reps:      1,
		servers:   serverNames(),
		scenarios: []string{"stream", "pingpong", "conns", "idle"},
		conns:     8,
		size:      4,
		many:      50,
		idle:      50,
	}
	if err := run(o); err != nil {
		t.Fatalf("run(%+v) = %v", o, err)
	}
}

func TestUnknownNames(t *testing.T) {
	base := options{duration: time.Millisecond, reps: 1, servers: []string{"stdnet"}, scenarios: []string{"stream"}}
	bad := base
	bad.servers = []string{"nosuch"}
	if err := run(bad); err == nil {
		t.Error("run with an unknown server = nil, want an error")
	}
	bad = base
	bad.scenarios = []string{"nosuch"}
	if err := run(bad); err == nil {
		t.Error("run with an unknown scenario = nil, want an error")
	}
}
