package soak

import (
	"strings"
	"testing"
	"time"
)

// The flatness check: within tolerance or not, waiting for a process to
// wind down, and saying which descriptors are new when it does not.

func TestFlat(t *testing.T) {
	tol := Tolerance{FDs: 0, Goroutines: 2}
	base := Level{FDs: 14, Goroutines: 4, RSS: 1 << 20}
	tests := []struct {
		end  Level
		want bool
	}{
		{Level{FDs: 14, Goroutines: 4}, true},
		{Level{FDs: 13, Goroutines: 3, RSS: 1 << 30}, true}, // memory is not judged
		{Level{FDs: 14, Goroutines: 6}, true},
		{Level{FDs: 15, Goroutines: 4}, false},
		{Level{FDs: 14, Goroutines: 7}, false},
	}
	for _, tt := range tests {
		if got := flat(base, tt.end, tol); got != tt.want {
			t.Errorf("flat(%+v, %+v, %+v) = %v, want %v", base, tt.end, tol, got, tt.want)
		}
	}
}

// fakeProc reads levels from a list, one a call, the last one again
// once the list is done.
func fakeProc(levels ...Level) *proc {
	i := 0
	return &proc{name: "fake", read: func() (Level, map[int]string, error) {
		l := levels[min(i, len(levels)-1)]
		i++
		fds := map[int]string{}
		for fd := range l.FDs {
			fds[fd] = "socket:[1]"
		}
		return l, fds, nil
	}}
}

func TestSettle(t *testing.T) {
	base := Level{FDs: 3, Goroutines: 2}
	baseFDs := map[int]string{0: "socket:[1]", 1: "socket:[1]", 2: "socket:[1]"}
	tol := DefaultTolerance
	c := settle(fakeProc(Level{FDs: 9, Goroutines: 8}, Level{FDs: 5, Goroutines: 3}, base), base, baseFDs, tol, 5*time.Second)
	if !c.Flat || c.End != base || len(c.problems()) != 0 {
		t.Errorf("settle on a process winding down = %+v, want flat at the baseline", c)
	}
	c = settle(fakeProc(Level{FDs: 5, Goroutines: 9}), base, baseFDs, tol, 200*time.Millisecond)
	if c.Flat || len(c.NewFDs) != 2 {
		t.Errorf("settle on a process that stays up = %+v, want not flat with 2 new descriptors", c)
	}
	p := strings.Join(c.problems(), "\n")
	for _, want := range []string{"fake: 5 descriptors at the end against 3 at the baseline (tolerance +0); new: 3 socket:[1], 4 socket:[1]",
		"fake: 9 goroutines at the end against 2 at the baseline (tolerance +2)"} {
		if !strings.Contains(p, want) {
			t.Errorf("problems() = %q, want %q", p, want)
		}
	}
}

func TestQuiet(t *testing.T) {
	busy := Level{FDs: 30, Goroutines: 9}
	idle := Level{FDs: 14, Goroutines: 4}
	l, _, err := quiet(fakeProc(busy, busy, idle), 5*time.Second)
	if err != nil || l != idle {
		t.Errorf("quiet = %+v, %v; want the idle level %+v", l, err, idle)
	}
}
