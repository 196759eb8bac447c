package loop_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// gatedBackend lets a test hold the loop around each Wait: it reports on
// entered that the loop is about to sleep, and after the real Wait returns
// it waits for a value on release. Closing quit ends the gating.
type gatedBackend struct {
	poller.Backend
	wakes   atomic.Int64
	entered chan struct{}
	release chan struct{}
	quit    chan struct{}
}

func (b *gatedBackend) Wake() error {
	b.wakes.Add(1)
	return b.Backend.Wake()
}

func (b *gatedBackend) Wait(d time.Duration, fn func(*poller.Completion)) error {
	if d == 0 {
		// Not a sleep (the loop's yield, or tasks already queued): the
		// gate holds the loop only where posters must wake it.
		return b.Backend.Wait(d, fn)
	}
	select {
	case b.entered <- struct{}{}:
	case <-b.quit:
		return b.Backend.Wait(d, fn)
	}
	err := b.Backend.Wait(d, fn)
	select {
	case <-b.release:
	case <-b.quit:
	}
	return err
}

// TestWakeOncePerBatch posts bursts of tasks while the loop sleeps and
// holds the loop until each burst is complete: every burst costs exactly
// one Wake, and all its tasks run.
func TestWakeOncePerBatch(t *testing.T) {
	gb := &gatedBackend{entered: make(chan struct{}), release: make(chan struct{}), quit: make(chan struct{})}
	l, err := loop.New(loop.Config{Open: func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.Open(p)
		if err != nil {
			return nil, err
		}
		gb.Backend = be
		return gb, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	defer l.Stop(nil)
	var ungate sync.Once
	defer ungate.Do(func() { close(gb.quit) })

	const rounds, burst = 5, 1000
	ran := 0 // loop goroutine only
	for r := range rounds {
		wait(t, gb.entered, "loop going to sleep")
		done := make(chan struct{})
		for i := range burst {
			task := loop.Func(func(*loop.Loop) { ran++ })
			if i == burst-1 {
				task = func(*loop.Loop) {
					ran++
					close(done)
				}
			}
			if err := l.Post(task); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := gb.wakes.Load(), int64(r+1); got != want {
			t.Fatalf("round %d: %d Wake calls for %d bursts of %d posts, want %d", r, got, r+1, burst, want)
		}
		gb.release <- struct{}{}
		wait(t, done, "burst")
	}
	ungate.Do(func() { close(gb.quit) })
	do(t, l, func(*loop.Loop) {})
	if ran != rounds*burst {
		t.Fatalf("%d tasks ran, want %d", ran, rounds*burst)
	}
}

// TestWakeNoTaskStranded hammers Post at every phase of the loop (busy,
// going to sleep, asleep, waking): every task must run within the bound,
// and Wake is called at most once per Post. The Flush hook, which runs
// between the last task of an iteration and the loop going to sleep,
// yields now and then to widen the window in which a post finds the loop
// neither busy nor asleep. With one producer no other post can rescue a
// stranded task.
func TestWakeNoTaskStranded(t *testing.T) {
	for _, producers := range []int{1, 4} {
		t.Run(fmt.Sprint("producers=", producers), func(t *testing.T) {
			testWakeNoTaskStranded(t, producers)
		})
	}
}

func testWakeNoTaskStranded(t *testing.T, producers int) {
	var cb *countingBackend
	flushes := 0 // loop goroutine only
	l := start(t, loop.Config{
		Open: openCounting(&cb),
		Flush: func() bool {
			flushes++
			for range flushes % 3 {
				runtime.Gosched()
			}
			return flushes%5 == 0 // now and then, take the yield path
		},
	})
	rounds := 4000 / producers
	if testing.Short() {
		rounds /= 4
	}
	var posts atomic.Int64
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(p), 3))
			ch := make(chan struct{}, 1)
			for i := range rounds {
				// Vary the phase of the loop at which the post lands.
				for range rng.IntN(64) {
					_ = rng.Uint64()
				}
				posts.Add(1)
				if err := l.Post(loop.Func(func(*loop.Loop) { ch <- struct{}{} })); err != nil {
					t.Errorf("producer %d: Post = %v", p, err)
					return
				}
				// Sometimes a burst that does not wait for its tasks.
				if i%7 == 0 {
					for range rng.IntN(8) {
						posts.Add(1)
						if err := l.Post(loop.Func(func(*loop.Loop) {})); err != nil {
							t.Errorf("producer %d: Post = %v", p, err)
							return
						}
					}
				}
				select {
				case <-ch:
				case <-time.After(waitLimit):
					t.Errorf("producer %d: task %d stranded: not run within %v", p, i, waitLimit)
					return
				}
			}
		}()
	}
	wg.Wait()
	if w, n := cb.wakes.Load(), posts.Load(); w > n {
		t.Fatalf("%d Wake calls for %d posts, want at most one per post", w, n)
	}
	t.Logf("%d posts, %d wake-ups", posts.Load(), cb.wakes.Load())
}

// TestWakeBusyLoopNotWoken checks that posts made from the loop goroutine
// itself, while it is busy, never call Wake.
func TestWakeBusyLoopNotWoken(t *testing.T) {
	var cb *countingBackend
	l := start(t, loop.Config{Open: openCounting(&cb)})
	do(t, l, func(*loop.Loop) {}) // let the start-up settle
	var before int64
	ran := 0
	do(t, l, func(l *loop.Loop) {
		before = cb.wakes.Load()
		for range 100 {
			l.Post(loop.Func(func(*loop.Loop) { ran++ }))
		}
		if got := cb.wakes.Load(); got != before {
			t.Errorf("posting from the busy loop called Wake %d times, want 0", got-before)
		}
	})
	do(t, l, func(*loop.Loop) {
		if ran != 100 {
			t.Errorf("%d self-posted tasks ran, want 100", ran)
		}
	})
}
