package loop_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// lastWaitBackend remembers the timeout of the loop's last Wait.
type lastWaitBackend struct {
	poller.Backend
	mu   sync.Mutex
	last time.Duration
}

func (b *lastWaitBackend) Wait(d time.Duration, fn func(*poller.Completion)) error {
	b.mu.Lock()
	b.last = d
	b.mu.Unlock()
	return b.Backend.Wait(d, fn)
}

func (b *lastWaitBackend) lastTimeout() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// TestYieldEvery drives a loop by a manual clock: the loop yields to the
// scheduler once YieldEvery has passed since its last yield, and only
// then, and the wait of that iteration does not block (it submits what
// is queued before the yield).
func TestYieldEvery(t *testing.T) {
	lb := &lastWaitBackend{}
	var yields, blocked atomic.Int64
	// Registered before start's Stop, so restored after the loop has ended.
	t.Cleanup(loop.SetYieldHook(func() {
		yields.Add(1)
		if lb.lastTimeout() != 0 {
			blocked.Add(1)
		}
	}))
	clock := loop.NewManualClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	l := start(t, loop.Config{Clock: clock, Open: func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.Open(p)
		lb.Backend = be
		return lb, err
	}})
	// The yield follows the wait of the iteration that read the clock:
	// a second task runs after it.
	round := func() int64 {
		do(t, l, func(*loop.Loop) {})
		do(t, l, func(*loop.Loop) {})
		return yields.Swap(0)
	}
	round() // the first iteration is due: the yield time starts at zero
	if n := round(); n != 0 {
		t.Fatalf("%d yields with the clock standing still, want 0", n)
	}
	clock.Advance(loop.YieldEvery - time.Nanosecond)
	if n := round(); n != 0 {
		t.Fatalf("%d yields before YieldEvery, want 0", n)
	}
	for range 3 {
		clock.Advance(loop.YieldEvery)
		if n := round(); n != 1 {
			t.Fatalf("%d yields after YieldEvery, want 1", n)
		}
	}
	if n := blocked.Load(); n != 0 {
		t.Errorf("%d yields followed a blocking wait, want 0", n)
	}
}
