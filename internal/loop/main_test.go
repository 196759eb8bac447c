package loop_test

import (
	"github.com/galeio/gale/internal/testkit/leaktest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// TestMain fails the run if the tests leak goroutines or descriptors.
func TestMain(m *testing.M) { leaktest.Main(m) }

// waitLimit bounds every wait of these tests; reaching it is a failure.
const waitLimit = 10 * time.Second

// start creates and starts a loop; the test's cleanup stops it.
func start(t *testing.T, cfg loop.Config) *loop.Loop {
	t.Helper()
	l, err := loop.New(cfg)
	if err != nil {
		t.Fatalf("loop.New: %v", err)
	}
	l.Start()
	t.Cleanup(func() { l.Stop(nil) })
	return l
}

// do runs f on the loop and waits for it.
func do(t *testing.T, l *loop.Loop, f func(l *loop.Loop)) {
	t.Helper()
	done := make(chan struct{})
	if err := l.Post(loop.Func(func(l *loop.Loop) {
		defer close(done)
		f(l)
	})); err != nil {
		t.Fatalf("Post: %v", err)
	}
	wait(t, done, "posted task")
}

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitLimit):
		t.Fatalf("%s did not happen within %v", what, waitLimit)
	}
}

// countingBackend wraps a real backend and counts Wake calls.
type countingBackend struct {
	poller.Backend
	wakes atomic.Int64
}

func (b *countingBackend) Wake() error {
	b.wakes.Add(1)
	return b.Backend.Wake()
}

// openCounting returns a Config.Open that records the backend it opens.
func openCounting(dst **countingBackend) func(poller.Provider) (poller.Backend, error) {
	return func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.Open(p)
		if err != nil {
			return nil, err
		}
		*dst = &countingBackend{Backend: be}
		return *dst, nil
	}
}
