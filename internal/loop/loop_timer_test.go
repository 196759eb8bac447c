package loop

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// checkHeap verifies the heap property and that every timer's index names
// its position.
func checkHeap(t *testing.T, l *Loop) {
	t.Helper()
	h := l.timers
	for i, tm := range h {
		if tm.index != i+1 {
			t.Fatalf("timers[%d].index = %d, want %d", i, tm.index, i+1)
		}
		if i > 0 {
			if p := (i - 1) / 2; h[i].when.Before(h[p].when) {
				t.Fatalf("timers[%d].when = %v before parent timers[%d].when = %v", i, h[i].when, p, h[p].when)
			}
		}
	}
}

type firing struct {
	id   int
	when time.Time // deadline the model expected
	now  time.Time // time passed to Fire
}

// TestTimerHeapRandom schedules, reschedules and unschedules many timers at
// random and checks against a model that each fires exactly once per
// schedule, in deadline order, only once its deadline has passed.
func TestTimerHeapRandom(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			testTimerHeapRandom(t, seed)
		})
	}
}

func testTimerHeapRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9a1e))
	l := &Loop{}
	base := time.Unix(1_000_000, 0)
	now := base
	const n = 300
	timers := make([]Timer, n)
	model := map[int]time.Time{} // scheduled timer id -> deadline
	var fired []firing
	for i := range timers {
		timers[i].Fire = func(at time.Time) {
			w, ok := model[i]
			if !ok {
				t.Fatalf("timer %d fired while not scheduled", i)
			}
			delete(model, i)
			fired = append(fired, firing{id: i, when: w, now: at})
		}
	}
	for step := range 20000 {
		switch r := rng.IntN(10); {
		case r < 5: // schedule or reschedule
			i := rng.IntN(n)
			when := now.Add(time.Duration(rng.IntN(2000)-100) * time.Millisecond)
			l.Schedule(&timers[i], when)
			model[i] = when
		case r < 7: // unschedule (possibly one that is not scheduled)
			i := rng.IntN(n)
			l.Unschedule(&timers[i])
			delete(model, i)
		default: // advance the clock and fire
			now = now.Add(time.Duration(rng.IntN(300)) * time.Millisecond)
			var due []int
			for id, w := range model {
				if !w.After(now) {
					due = append(due, id)
				}
			}
			fired = fired[:0]
			l.fireTimers(now)
			if len(fired) != len(due) {
				t.Fatalf("step %d: fireTimers(%v) fired %d timers, want %d", step, now.Sub(base), len(fired), len(due))
			}
			got := make([]int, 0, len(fired))
			for k, f := range fired {
				got = append(got, f.id)
				if !f.now.Equal(now) {
					t.Fatalf("step %d: Fire(now) got %v, want %v", step, f.now, now)
				}
				if f.when.After(now) {
					t.Fatalf("step %d: timer %d with deadline %v fired at %v", step, f.id, f.when, now)
				}
				if k > 0 && f.when.Before(fired[k-1].when) {
					t.Fatalf("step %d: timer %d (deadline %v) fired after timer %d (deadline %v)", step, f.id, f.when, fired[k-1].id, fired[k-1].when)
				}
			}
			slices.Sort(got)
			slices.Sort(due)
			if !slices.Equal(got, due) {
				t.Fatalf("step %d: fired %v, want %v", step, got, due)
			}
		}
		if got, want := l.Timers(), len(model); got != want {
			t.Fatalf("step %d: Timers() = %d, want %d", step, got, want)
		}
		if step%97 == 0 {
			checkHeap(t, l)
			for i := range timers {
				_, want := model[i]
				if got := timers[i].Scheduled(); got != want {
					t.Fatalf("step %d: timers[%d].Scheduled() = %v, want %v", step, i, got, want)
				}
			}
		}
	}
	// Drain: everything left fires exactly once, in order.
	fired = fired[:0]
	left := len(model)
	l.fireTimers(now.Add(time.Hour))
	if len(fired) != left || l.Timers() != 0 {
		t.Fatalf("final fireTimers fired %d, Timers() = %d; want %d, 0", len(fired), l.Timers(), left)
	}
	for k := 1; k < len(fired); k++ {
		if fired[k].when.Before(fired[k-1].when) {
			t.Fatalf("final drain out of order at %d", k)
		}
	}
	for i := range timers {
		if timers[i].Scheduled() {
			t.Fatalf("timers[%d].Scheduled() = true after draining, want false", i)
		}
	}
}

func TestTimerRescheduleReplacesDeadline(t *testing.T) {
	l := &Loop{}
	t0 := time.Unix(1000, 0)
	var fires []time.Time
	var tm Timer
	tm.Fire = func(now time.Time) { fires = append(fires, now) }

	if tm.Scheduled() {
		t.Fatal("zero Timer.Scheduled() = true, want false")
	}
	l.Schedule(&tm, t0.Add(10*time.Second))
	l.Schedule(&tm, t0.Add(5*time.Second)) // earlier
	if got := l.Timers(); got != 1 {
		t.Fatalf("Timers() after rescheduling = %d, want 1", got)
	}
	l.fireTimers(t0.Add(4 * time.Second))
	if len(fires) != 0 {
		t.Fatalf("fired before the new deadline: %v", fires)
	}
	l.fireTimers(t0.Add(5 * time.Second))
	if len(fires) != 1 || tm.Scheduled() {
		t.Fatalf("after new deadline: fires = %d, Scheduled() = %v; want 1, false", len(fires), tm.Scheduled())
	}
	l.fireTimers(t0.Add(10 * time.Second))
	if len(fires) != 1 {
		t.Fatalf("old deadline fired too: fires = %d, want 1", len(fires))
	}

	// Rescheduling to a later deadline postpones the timer.
	l.Schedule(&tm, t0.Add(20*time.Second))
	l.Schedule(&tm, t0.Add(30*time.Second))
	l.fireTimers(t0.Add(25 * time.Second))
	if len(fires) != 1 || !tm.Scheduled() {
		t.Fatalf("at 25s: fires = %d, Scheduled() = %v; want 1, true", len(fires), tm.Scheduled())
	}
	l.fireTimers(t0.Add(30 * time.Second))
	if len(fires) != 2 {
		t.Fatalf("at 30s: fires = %d, want 2", len(fires))
	}

	// Unschedule of an idle timer is a no-op; a timer fired can be reused.
	l.Unschedule(&tm)
	l.Schedule(&tm, t0)
	l.Unschedule(&tm)
	l.fireTimers(t0.Add(time.Hour))
	if len(fires) != 2 || l.Timers() != 0 {
		t.Fatalf("after Unschedule: fires = %d, Timers() = %d; want 2, 0", len(fires), l.Timers())
	}
}

// TestTimerFireMutatesHeap lets Fire callbacks schedule, reschedule and
// unschedule timers while fireTimers runs.
func TestTimerFireMutatesHeap(t *testing.T) {
	l := &Loop{}
	t0 := time.Unix(1000, 0)
	var a, b, c, d Timer
	var order []string
	a.Fire = func(now time.Time) {
		order = append(order, "a")
		l.Unschedule(&b)                      // due too, must not fire
		l.Schedule(&c, now)                   // due now: fires in this call
		l.Schedule(&a, now.Add(time.Second))  // itself, later
		l.Schedule(&d, now.Add(-time.Second)) // already past
	}
	b.Fire = func(time.Time) { order = append(order, "b") }
	c.Fire = func(time.Time) { order = append(order, "c") }
	d.Fire = func(time.Time) { order = append(order, "d") }
	l.Schedule(&a, t0)
	l.Schedule(&b, t0.Add(time.Millisecond))
	l.fireTimers(t0.Add(time.Millisecond))
	if got, want := fmt.Sprint(order), "[a d c]"; got != want {
		t.Fatalf("fire order = %s, want %s", got, want)
	}
	if !a.Scheduled() || b.Scheduled() || c.Scheduled() || d.Scheduled() {
		t.Fatalf("Scheduled() a, b, c, d = %v, %v, %v, %v; want true, false, false, false",
			a.Scheduled(), b.Scheduled(), c.Scheduled(), d.Scheduled())
	}
	checkHeap(t, l)
}

func TestTimerTimeout(t *testing.T) {
	l := &Loop{}
	t0 := time.Unix(1000, 0)
	if got := l.timeout(t0); got >= 0 {
		t.Fatalf("timeout with no timer = %v, want negative", got)
	}
	var a, b Timer
	a.Fire, b.Fire = func(time.Time) {}, func(time.Time) {}
	l.Schedule(&a, t0.Add(3*time.Second))
	l.Schedule(&b, t0.Add(2*time.Second))
	if got, want := l.timeout(t0), 2*time.Second; got != want {
		t.Fatalf("timeout = %v, want %v", got, want)
	}
	if got := l.timeout(t0.Add(time.Hour)); got != 0 {
		t.Fatalf("timeout past the deadline = %v, want 0", got)
	}
}
