package loop_test

import (
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// timeoutBackend records the timeout of every Wait.
type timeoutBackend struct {
	poller.Backend
	mu       sync.Mutex
	timeouts []time.Duration
}

func (b *timeoutBackend) Wait(d time.Duration, fn func(*poller.Completion)) error {
	b.mu.Lock()
	b.timeouts = append(b.timeouts, d)
	b.mu.Unlock()
	return b.Backend.Wait(d, fn)
}

// zeros counts the waits that did not block, and forgets them all.
func (b *timeoutBackend) zeros() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, d := range b.timeouts {
		if d == 0 {
			n++
		}
	}
	b.timeouts = b.timeouts[:0]
	return n
}

// TestYieldEvery drives a loop by a manual clock: once YieldEvery has
// passed since its last yield, the loop's next wait does not block (it
// submits what is queued; the runtime.Gosched follows it), and only then.
func TestYieldEvery(t *testing.T) {
	clock := &manualClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	tb := &timeoutBackend{}
	l := start(t, loop.Config{Clock: clock, Open: func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.Open(p)
		tb.Backend = be
		return tb, err
	}})
	var far loop.Timer
	far.Fire = func(time.Time) {}
	do(t, l, func(l *loop.Loop) { l.Schedule(&far, l.Now().Add(time.Hour)) })
	// A task's completion is seen before the loop's next wait: the second
	// task runs only after that wait has been entered.
	round := func() int {
		do(t, l, func(*loop.Loop) {})
		do(t, l, func(*loop.Loop) {})
		return tb.zeros()
	}
	round() // the first iteration is due: the yield time starts at zero
	if n := round(); n != 0 {
		t.Fatalf("%d waits did not block with the clock standing still, want 0", n)
	}
	clock.Advance(loop.YieldEvery - time.Nanosecond)
	if n := round(); n != 0 {
		t.Fatalf("%d waits did not block before YieldEvery, want 0", n)
	}
	for range 3 {
		clock.Advance(loop.YieldEvery)
		if n := round(); n != 1 {
			t.Fatalf("%d waits did not block after YieldEvery, want 1", n)
		}
	}
}
