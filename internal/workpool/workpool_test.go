package workpool

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const wait = 10 * time.Second

// counter is a job that runs n turns, counting them.
type counter struct {
	mu    sync.Mutex
	turns int
	n     int
	busy  atomic.Int32
	twice atomic.Bool
	done  chan struct{}
}

func (c *counter) Run() bool {
	if c.busy.Add(1) != 1 {
		c.twice.Store(true)
	}
	defer c.busy.Add(-1)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.turns++
	if c.turns == c.n {
		close(c.done)
		return false
	}
	return true
}

func newCounter(n int) *counter { return &counter{n: n, done: make(chan struct{})} }

func recv(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatalf("no %s within %v", what, wait)
	}
}

// TestFairness: on one worker, a job that always has more to do goes to
// the back of the queue after each turn, so a job submitted after it runs.
func TestFairness(t *testing.T) {
	p := New(1, time.Second)
	defer p.Close()
	flood := newCounter(1 << 62)
	p.Submit(flood)
	other := newCounter(1)
	p.Submit(other)
	recv(t, other.done, "turn of the second job beside a flooding one")
	flood.mu.Lock() // stop the flood: its next turn ends it
	flood.n = flood.turns + 1
	flood.mu.Unlock()
	recv(t, flood.done, "end of the flooding job")
	if flood.twice.Load() || other.twice.Load() {
		t.Error("a job ran on two workers at once")
	}
}

// TestBound: never more than max workers; idle ones end after the idle
// time; Close waits for the queue and leaves none.
func TestBound(t *testing.T) {
	p := New(3, 50*time.Millisecond)
	release := make(chan struct{})
	var running, peak atomic.Int32
	jobs := make([]*blocker, 10)
	for i := range jobs {
		jobs[i] = &blocker{release: release, running: &running, peak: &peak}
		p.Submit(jobs[i])
	}
	deadline := time.Now().Add(wait)
	for running.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := p.Workers(); n != 3 {
		t.Errorf("Workers() = %d with 10 blocked jobs, want 3", n)
	}
	close(release)
	for p.Workers() > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := p.Workers(); n != 0 {
		t.Errorf("Workers() = %d after the idle time, want 0", n)
	}
	if n := peak.Load(); n > 3 {
		t.Errorf("%d jobs ran at once, want at most 3", n)
	}
	for i, j := range jobs {
		if !j.ran.Load() {
			t.Errorf("job %d never ran", i)
		}
	}
	p.Submit(newCounter(1))
	p.Close()
	if n := p.Workers(); n != 0 {
		t.Errorf("Workers() after Close = %d, want 0", n)
	}
}

type blocker struct {
	release       chan struct{}
	running, peak *atomic.Int32
	ran           atomic.Bool
}

func (b *blocker) Run() bool {
	n := b.running.Add(1)
	for {
		p := b.peak.Load()
		if n <= p || b.peak.CompareAndSwap(p, n) {
			break
		}
	}
	<-b.release
	b.running.Add(-1)
	b.ran.Store(true)
	return false
}

// TestOnWorker tells the pool's goroutines from others.
func TestOnWorker(t *testing.T) {
	p := New(1, time.Second)
	defer p.Close()
	if p.OnWorker() {
		t.Error("OnWorker() = true on the test's goroutine")
	}
	got := make(chan bool, 1)
	p.Submit(jobFunc(func() bool { got <- p.OnWorker(); return false }))
	select {
	case v := <-got:
		if !v {
			t.Error("OnWorker() = false on a worker")
		}
	case <-time.After(wait):
		t.Fatal("the job never ran")
	}
}

type jobFunc func() bool

func (f jobFunc) Run() bool { return f() }
