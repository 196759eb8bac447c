package soak

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Tolerance is how far above its idle baseline a process may end and
// still count as flat.
type Tolerance struct {
	FDs        int `json:"fds"`
	Goroutines int `json:"goroutines"`
}

// DefaultTolerance: no descriptor, since once every client connection is
// closed and the server has had time to see it, any descriptor more is a
// leak; two goroutines, as internal/testkit/leaktest allows, for the runtime's
// finalizer and cleanup goroutines, which runtime.NumGoroutine counts
// while they run user code.
var DefaultTolerance = Tolerance{FDs: 0, Goroutines: 2}

// Check compares a process's idle levels after the warm-up (the baseline)
// and after the run, once every client connection has closed.
type Check struct {
	Kind      string    `json:"kind"` // "check"
	Proc      string    `json:"proc"`
	Baseline  Level     `json:"baseline"`
	End       Level     `json:"end"`
	Peak      Level     `json:"peak"` // the highest of each figure sampled
	Tolerance Tolerance `json:"tolerance"`
	Flat      bool      `json:"flat"`
	// NewFDs are the descriptors open at the end and not at the baseline,
	// with their readlink targets.
	NewFDs map[int]string `json:"new_fds,omitempty"`
	Err    string         `json:"error,omitempty"` // a reading failed
	// Stacks is the file, beside the report, that holds the goroutines'
	// stacks of a server that was not flat.
	Stacks string `json:"stacks,omitempty"`
}

// flat reports whether end is within tol of base.
func flat(base, end Level, tol Tolerance) bool {
	return end.FDs <= base.FDs+tol.FDs && end.Goroutines <= base.Goroutines+tol.Goroutines
}

// Polling: the baseline is taken once quietReads readings pollEvery apart
// agree; the end check polls until the process is back within tolerance.
const (
	pollEvery  = 50 * time.Millisecond
	quietReads = 6
)

// quiet waits, for at most wait, until p's descriptor and goroutine
// counts hold still, and returns the last reading: its idle level.
func quiet(p *proc, wait time.Duration) (Level, map[int]string, error) {
	deadline := time.Now().Add(wait)
	var last Level
	same := 0
	for {
		l, fds, err := p.read()
		if err != nil {
			return l, fds, err
		}
		if l.FDs == last.FDs && l.Goroutines == last.Goroutines {
			same++
		} else {
			same = 1
		}
		if same >= quietReads || time.Now().After(deadline) {
			return l, fds, nil
		}
		last = l
		time.Sleep(pollEvery)
	}
}

// settle waits, for at most wait, until p is back within tol of base,
// and returns the check.
func settle(p *proc, base Level, baseFDs map[int]string, tol Tolerance, wait time.Duration) Check {
	c := Check{Kind: "check", Proc: p.name, Baseline: base, Tolerance: tol}
	deadline := time.Now().Add(wait)
	for {
		l, fds, err := p.read()
		if err != nil {
			c.Err = err.Error()
			return c
		}
		c.End, c.Flat = l, flat(base, l, tol)
		if c.Flat || time.Now().After(deadline) {
			if !c.Flat {
				c.NewFDs = newFDs(baseFDs, fds)
			}
			return c
		}
		time.Sleep(pollEvery)
	}
}

// newFDs returns the entries of now not in before, by number and target.
func newFDs(before, now map[int]string) map[int]string {
	added := map[int]string{}
	for fd, target := range now {
		if before[fd] != target {
			added[fd] = target
		}
	}
	return added
}

// problems describes what is wrong with the check, if anything.
func (c Check) problems() []string {
	if c.Err != "" {
		return []string{fmt.Sprintf("%s: reading it failed: %s", c.Proc, c.Err)}
	}
	var out []string
	if d := c.End.FDs - c.Baseline.FDs; d > c.Tolerance.FDs {
		out = append(out, fmt.Sprintf("%s: %d descriptors at the end against %d at the baseline (tolerance +%d)%s",
			c.Proc, c.End.FDs, c.Baseline.FDs, c.Tolerance.FDs, describeFDs(c.NewFDs)))
	}
	if d := c.End.Goroutines - c.Baseline.Goroutines; d > c.Tolerance.Goroutines {
		stacks := ""
		if c.Stacks != "" {
			stacks = "; stacks in " + c.Stacks
		}
		out = append(out, fmt.Sprintf("%s: %d goroutines at the end against %d at the baseline (tolerance +%d)%s",
			c.Proc, c.End.Goroutines, c.Baseline.Goroutines, c.Tolerance.Goroutines, stacks))
	}
	return out
}

// describeFDs lists a few descriptors for a message: "; new: 12 socket:[…], …".
func describeFDs(fds map[int]string) string {
	if len(fds) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(fds))
	var parts []string
	for i, fd := range keys {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", fd, fds[fd]))
	}
	return "; new: " + strings.Join(parts, ", ")
}
