package stresstest

import (
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/faulttest"
)

// starvedCPU is the most CPU the process may use, in a fraction of one
// core, while its descriptor table is full and nothing else runs: a
// server that retried at once what needs a descriptor would use a whole
// core.
const starvedCPU = 0.20

// Starvation is a server at the process's real open-file limit
// (RLIMIT_NOFILE), as Starve drives it: what it serves throughout, and
// the caller's steps that bring it to the limit and back.
type Starvation struct {
	// Served are clients the server serves before the table fills; it
	// must serve them throughout.
	Served []*faulttest.Echo
	// Starve runs once the table is full: it has the server meet the
	// limit (clients connect, conns are handed over), and returns once it
	// has (a failed accept or delegation seen), each wait bounded.
	Starve func(t *testing.T)
	// Starved, if set, runs after a second at the limit, before the
	// descriptors are freed: it checks what the server must not have
	// done meanwhile.
	Starved func(t *testing.T)
	// Freed runs once the descriptors are freed: it has the server take
	// what it could not (accept, delegate) and returns the clients of
	// those connections, which must then be served.
	Freed func(t *testing.T) []*faulttest.Echo
}

// Starve checks a server when the process has no descriptor left: that
// it goes on serving what it serves, does not spin, and recovers. After
// an echo round on s.Served (EchoRound), it waits for what earlier tests
// were still closing (faulttest.Settle), fills the descriptor table
// (faulttest.Exhaust) and runs s.Starve; s.Served must echo, then, what
// was freed meanwhile taken again, the process must use under 20 % of a
// core over a second (getrusage(2)); s.Starved runs, and s.Served must
// echo again. Then it frees the descriptors and runs s.Freed, whose
// clients must echo, and s.Served last. The exhaustion skips t where the
// open-file limit is too large to fill. For the test's goroutine, which
// runs the steps; it fills the whole process's table: not for parallel
// tests.
func Starve(t *testing.T, s Starvation) {
	t.Helper()
	EchoRound(t, s.Served, "before the table is full")
	faulttest.Settle(t) // nothing of an earlier test's still closing
	full := faulttest.Exhaust(t, 0)
	s.Starve(t)
	EchoRound(t, s.Served, "while the table is full")
	if n := full.Refill(); n > 0 {
		t.Logf("%d descriptors freed since the table was filled, taken again", n)
	}

	cpu0, t0 := faulttest.CPUTime(), time.Now()
	time.Sleep(time.Second)
	cpu, wall := faulttest.CPUTime()-cpu0, time.Since(t0)
	share := cpu.Seconds() / wall.Seconds()
	t.Logf("starved for %v with %d descriptors filling the table: %v of CPU (%.1f %% of a core)", wall.Round(time.Millisecond), full.Len(), cpu.Round(time.Millisecond), 100*share)
	if share > starvedCPU {
		t.Errorf("the process used %.1f %% of a core with its table full, want under %.0f %%: it spins", 100*share, 100*starvedCPU)
	}
	if s.Starved != nil {
		s.Starved(t)
	}
	EchoRound(t, s.Served, "after a second with the table full")

	full.Release()
	EchoRound(t, s.Freed(t), "served once descriptors were freed")
	EchoRound(t, s.Served, "at the end")
}
