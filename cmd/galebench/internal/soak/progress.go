package soak

import (
	"context"
	"fmt"
	"time"
)

// statusEvery prints the status line every interval until ctx ends; the
// channel it returns is closed once it has stopped.
func (r *runner) statusEvery(ctx context.Context, interval time.Duration) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				r.progress("%s", r.status())
			case <-ctx.Done():
				return
			}
		}
	}()
	return done
}

// status is the progress line: each server's verified bytes and
// connections so far.
func (r *runner) status() string {
	s := ""
	for _, tg := range r.targets {
		t := tg.t.totals(tg.name)
		s += fmt.Sprintf("  %s %s verified, %s conns", tg.name, fmtBytes(t.Verified), fmtCount(t.Opened))
		if t.Lost+t.Corrupted+t.UnexpectedErrors() > 0 {
			s += fmt.Sprintf(" (lost %d, corrupted %d, unexpected errors: %s)", t.Lost, t.Corrupted, kinds(t.Unexpected))
		}
	}
	return s
}

// progress prints a line with the time since the start, if Options ask
// for progress.
func (r *runner) progress(format string, args ...any) {
	if r.o.Progress != nil {
		fmt.Fprintf(r.o.Progress, "soak %6.1fs: %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
	}
}
