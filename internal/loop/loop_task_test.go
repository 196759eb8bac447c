package loop_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
)

// seqTask records its sequence number in the loop-owned log of its
// producer.
type seqTask struct {
	log *[]int
	seq int
}

func (s *seqTask) Run(*loop.Loop) { *s.log = append(*s.log, s.seq) }

// TestPostManyGoroutines posts from many goroutines at once: every task
// runs exactly once, and each producer's tasks run in the order it posted
// them.
func TestPostManyGoroutines(t *testing.T) {
	const producers, perProducer = 8, 3000
	l, err := loop.New(loop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	logs := make([][]int, producers) // written on the loop goroutine only
	var wg sync.WaitGroup
	startGate := make(chan struct{})
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-startGate
			for i := range perProducer {
				if err := l.Post(&seqTask{log: &logs[p], seq: i}); err != nil {
					t.Errorf("producer %d: Post(%d) = %v, want nil", p, i, err)
					return
				}
			}
		}()
	}
	close(startGate)
	wg.Wait()
	l.Stop(nil) // runs after every task posted before it; waits for the loop
	for p, log := range logs {
		if len(log) != perProducer {
			t.Errorf("producer %d: %d tasks ran, want %d", p, len(log), perProducer)
			continue
		}
		for i, seq := range log {
			if seq != i {
				t.Errorf("producer %d: task %d ran at position %d", p, seq, i)
				break
			}
		}
	}
}

func TestPostAfterStop(t *testing.T) {
	l, err := loop.New(loop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	l.Stop(nil)
	ran := false
	if err := l.Post(loop.Func(func(*loop.Loop) { ran = true })); !errors.Is(err, loop.ErrStopped) {
		t.Fatalf("Post after Stop = %v, want %v", err, loop.ErrStopped)
	}
	l.Stop(nil) // a second Stop only waits
	if ran {
		t.Fatal("task posted after Stop ran")
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Done() not closed after Stop returned")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err() after a clean Stop = %v, want nil", err)
	}
}

// TestStopRunsFinalLast checks that final runs on the loop after every
// task posted before Stop, exactly once, and that Stop returns only after
// the loop goroutine is gone.
func TestStopRunsFinalLast(t *testing.T) {
	l, err := loop.New(loop.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	const n = 1000
	ran := 0 // loop goroutine only until Stop returns
	// Block the loop so the tasks and Stop queue up behind it.
	block := make(chan struct{})
	if err := l.Post(loop.Func(func(*loop.Loop) { <-block })); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := l.Post(loop.Func(func(*loop.Loop) { ran++ })); err != nil {
			t.Fatal(err)
		}
	}
	var finals atomic.Int32
	var seenAtFinal int
	var stopped sync.WaitGroup
	for range 3 { // concurrent Stops: final runs once, all of them wait
		stopped.Add(1)
		go func() {
			defer stopped.Done()
			l.Stop(func(*loop.Loop) {
				finals.Add(1)
				seenAtFinal = ran
			})
			select {
			case <-l.Done():
			default:
				t.Error("Stop returned before the loop goroutine ended")
			}
		}()
	}
	// Stop must wait for the blocked loop.
	select {
	case <-l.Done():
		t.Fatal("loop ended while a task was still blocked")
	default:
	}
	close(block)
	stopped.Wait()
	if got := finals.Load(); got != 1 {
		t.Fatalf("final ran %d times, want 1", got)
	}
	if seenAtFinal != n {
		t.Fatalf("final saw %d earlier tasks done, want %d", seenAtFinal, n)
	}
}

// TestFlushAfterTasks checks that Flush runs on every iteration after the
// iteration's tasks, and that a Flush reporting handed-off work makes the
// loop run another iteration without sleeping.
func TestFlushAfterTasks(t *testing.T) {
	var tasks, flushedAt int // loop goroutine only
	flushes := 0
	l := start(t, loop.Config{Flush: func() bool {
		flushes++
		flushedAt = tasks
		return flushes%2 == 0
	}})
	for range 5 {
		do(t, l, func(*loop.Loop) { tasks++ })
	}
	do(t, l, func(*loop.Loop) {
		// The flush of the previous iteration saw all earlier tasks.
		if flushedAt != tasks {
			t.Errorf("Flush saw %d tasks, want %d", flushedAt, tasks)
		}
		if flushes == 0 {
			t.Error("Flush never ran")
		}
	})
}

// TestNoFlushAfterFinal checks that Flush does not run after Stop's final
// function.
func TestNoFlushAfterFinal(t *testing.T) {
	finalDone := false // loop goroutine only
	late := 0
	l, err := loop.New(loop.Config{Flush: func() bool {
		if finalDone {
			late++
		}
		return false
	}})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	l.Stop(func(*loop.Loop) { finalDone = true })
	if late != 0 {
		t.Fatalf("Flush ran %d times after final, want 0", late)
	}
}

func TestNewOpenError(t *testing.T) {
	want := errors.New("no backend today")
	l, err := loop.New(loop.Config{Open: func(poller.Provider) (poller.Backend, error) { return nil, want }})
	if err != want || l != nil {
		t.Fatalf("New with failing Open = %v, %v; want nil, %v", l, err, want)
	}
}

// faultyBackend fails its first Wait that happens after fail is closed.
type faultyBackend struct {
	poller.Backend
	fail   chan struct{}
	closed atomic.Bool
}

var errInjected = errors.New("injected wait failure")

func (b *faultyBackend) Wait(d time.Duration, fn func(*poller.Completion)) error {
	select {
	case <-b.fail:
		return errInjected
	default:
	}
	return b.Backend.Wait(d, fn)
}

func (b *faultyBackend) Close() error {
	b.closed.Store(true)
	return b.Backend.Close()
}

// TestBackendFault checks that a failing Wait ends the loop: Err reports
// the failure, Post refuses work, Stop returns and the backend is closed.
func TestBackendFault(t *testing.T) {
	var fb *faultyBackend
	l, err := loop.New(loop.Config{Open: func(p poller.Provider) (poller.Backend, error) {
		be, err := poller.Open(p)
		if err != nil {
			return nil, err
		}
		fb = &faultyBackend{Backend: be, fail: make(chan struct{})}
		return fb, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	l.Start()
	close(fb.fail)
	if err := l.Post(loop.Func(func(*loop.Loop) {})); err != nil && !errors.Is(err, loop.ErrStopped) {
		t.Fatalf("Post = %v, want nil or ErrStopped", err)
	}
	wait(t, l.Done(), "loop end after a backend fault")
	if err := l.Err(); err != errInjected {
		t.Fatalf("Err() = %v, want %v", err, errInjected)
	}
	if err := l.Post(loop.Func(func(*loop.Loop) {})); !errors.Is(err, loop.ErrStopped) {
		t.Fatalf("Post after a fault = %v, want ErrStopped", err)
	}
	stopped := make(chan struct{})
	go func() {
		l.Stop(nil)
		close(stopped)
	}()
	wait(t, stopped, "Stop after a fault")
	if !fb.closed.Load() {
		t.Fatal("backend not closed after the loop ended")
	}
}
