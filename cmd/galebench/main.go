// Command galebench measures gale's echo servers against the standard
// library's on loopback, side by side, and prints a comparison table.
//
// Each server runs in a child process (this binary, re-executed with
// -serve), so its CPU time and memory are measured from /proc alone. The
// load generator is the same for every server: a goroutine per connection
// over package net, and it verifies every byte it gets back.
//
// Usage:
//
//	go run ./cmd/galebench                     # default suite, about 80 s
//	go run ./cmd/galebench -d 5s -servers aio,stdnet -scenarios pingpong
//
// Servers: aio (a Watcher), engine (package engine's reactor, default
// Options) and stdnet (a goroutine per connection).
//
// Scenarios:
//
//	stream    1 conn streams 64 KiB writes; the echo is read back (MB/s)
//	pingpong  -conns conns (default 50) send -size byte messages (default 4)
//	          and wait for each echo (msg/s, latency percentiles)
//	conns     -many conns (default 1000) each echo 1 KiB per round (ms per round)
//	idle      -idle conns (default 10000) each echo 1 byte, then stay open:
//	          the server's resident memory growth per connection (bytes);
//	          not in the default suite (run it with -scenarios idle)
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"time"
)

type options struct {
	duration  time.Duration
	reps      int
	servers   []string
	scenarios []string
	conns     int
	size      int
	many      int
	idle      int
}

func main() {
	serve := flag.String("serve", "", "run as a server child: "+strings.Join(serverNames(), ", ")+" (internal)")
	var o options
	flag.DurationVar(&o.duration, "d", 3*time.Second, "duration of each measurement")
	flag.IntVar(&o.reps, "reps", 3, "repetitions, interleaved across servers; medians are reported")
	servers := flag.String("servers", "aio,engine,stdnet", "servers to compare: "+strings.Join(serverNames(), ","))
	scenarios := flag.String("scenarios", "stream,pingpong,conns", "scenarios to run")
	flag.IntVar(&o.conns, "conns", 50, "connections in pingpong")
	flag.IntVar(&o.size, "size", 4, "message size in pingpong, bytes")
	flag.IntVar(&o.many, "many", 1000, "connections in conns")
	flag.IntVar(&o.idle, "idle", 10000, "connections in idle (at most about 19,000: the open-file limit)")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write the gale server's CPU profile to this file (last run wins)")
	flag.Parse()

	if *serve != "" {
		if err := runServer(*serve, cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "galebench server:", err)
			os.Exit(1)
		}
		return
	}
	o.servers = strings.Split(*servers, ",")
	o.scenarios = strings.Split(*scenarios, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "galebench:", err)
		os.Exit(1)
	}
}

// run measures every scenario on every server, reps times, interleaving
// the servers so that drifts in machine load hit them alike.
func run(o options) error {
	for _, s := range o.servers {
		if !knownServer(s) {
			return fmt.Errorf("unknown server %q (have %s)", s, strings.Join(serverNames(), ", "))
		}
	}
	fmt.Printf("galebench: %d repetition(s) of %v per scenario and server, loopback, GOMAXPROCS=%s\n",
		o.reps, o.duration, gomaxprocs())
	var table []row
	for _, sc := range o.scenarios {
		drive, ok := scenarioFuncs[sc]
		if !ok {
			return fmt.Errorf("unknown scenario %q", sc)
		}
		runs := make(map[string][]result)
		for rep := range o.reps {
			for _, srv := range o.servers {
				progress("%s: %s, run %d/%d", sc, srv, rep+1, o.reps)
				r, err := measure(srv, func(addr string, pid int) (result, error) { return drive(addr, pid, o) })
				if err != nil {
					return fmt.Errorf("%s on %s: %w", sc, srv, err)
				}
				runs[srv] = append(runs[srv], r)
			}
		}
		progress("")
		for _, srv := range o.servers {
			table = append(table, summarize(sc, srv, runs[srv]))
		}
	}
	printTable(os.Stdout, table, o)
	return nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "\r\033[K"+format, args...)
}

func gomaxprocs() string {
	if v := os.Getenv("GOMAXPROCS"); v != "" {
		return v
	}
	return "default"
}
