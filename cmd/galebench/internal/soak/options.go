package soak

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Options choose what Run soaks and how.
type Options struct {
	Duration time.Duration // of the load, warm-up included
	Servers  []string      // names of the servers, all soaked at once
	// Explicit says Servers were chosen by hand: a server whose backend
	// this machine lacks is then an error, where by default it is skipped.
	Explicit  bool
	Conns     int           // client connections per server at a time
	Seed      uint64        // of every plan
	Every     time.Duration // sampling interval
	Stall     time.Duration // no progress for this long is an error
	Settle    time.Duration // how long the end check waits for the processes to wind down
	Tolerance Tolerance
	// Out, if set, is a directory that receives soak.jsonl, report.md and
	// the charts.
	Out      string
	Command  string    // the command line, for the report
	Progress io.Writer // phase and progress lines; nil for none
}

// Defaults: the servers, every backend of both APIs; and the load.
var (
	DefaultServers = []string{"aio", "engine", "aio-io_uring", "engine-io_uring"}
	defaults       = Options{
		Duration: 10 * time.Minute, Conns: 16, Every: time.Second,
		Stall: 30 * time.Second, Settle: 10 * time.Second, Tolerance: DefaultTolerance,
	}
)

// warmupFor is the warm-up's share of a run of d: a tenth, at most 10 s.
// It lets every server allocate what it keeps for good (buffer pools,
// rings, loops' tables) before the baseline is taken.
func warmupFor(d time.Duration) time.Duration { return min(d/10, 10*time.Second) }

// fdShare is the share of the open-file limit the soak may use for its
// connections: each costs one descriptor in the client and one in its
// server, and the limit is per process, so a tenth leaves a wide margin.
const fdShare = 10

// validate checks the options against each other and the open-file
// limit.
func (o *Options) validate() error {
	switch {
	case o.Duration < time.Second:
		return errors.New("-d must be at least 1s")
	case len(o.Servers) == 0:
		return errors.New("no server chosen")
	case o.Conns < 1:
		return errors.New("-conns must be at least 1")
	case o.Every <= 0 || o.Stall <= 0 || o.Settle <= 0:
		return errors.New("-every, -stall and -settle must be positive")
	}
	if lim, ok := openFileLimit(); ok {
		if n := o.Conns * len(o.Servers); uint64(n) > lim/fdShare {
			return fmt.Errorf("%d connections at a time (-conns %d × %d servers) is more than a %dth of the open-file limit (%d)",
				n, o.Conns, len(o.Servers), fdShare, lim)
		}
	}
	return nil
}
