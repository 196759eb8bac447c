// Package workpool runs jobs on a bounded, elastic set of goroutines for
// engine's and websocket's pooled callbacks (engine.Pool).
//
// A Job is one connection's serial queue of callbacks. Its owner submits
// it when the queue goes from empty to not empty, and never again until
// the job reports it has nothing left, so a job is in the ready queue or
// running on one worker, never both, never twice: a connection's
// callbacks run one at a time, in order, and a connection holds at most
// one worker. A worker runs a bounded batch of a job (Job.Run's business)
// and puts a job with more to do at the back of the queue, so that one
// flooding connection takes its turn with the others.
//
// Submit never waits: it queues the job, then wakes an idle worker or
// starts one while fewer than the maximum run. The queue holds each job
// at most once, so it is bounded by the number of connections. Workers
// end after an idle time; an idle pool holds no goroutine.
package workpool

import (
	"slices"
	"sync"
	"time"

	"github.com/galeio/gale/internal/goid"
)

// A Job is run by one worker at a time.
type Job interface {
	// Run does a bounded share of the job's work and reports whether
	// some is left; a job that reports none must be submitted again for
	// new work.
	Run() (more bool)
}

// Pool runs jobs on at most max goroutines.
type Pool struct {
	// MaxQueued is the bytes a job's owner queues before it stops
	// reading (engine.PoolOptions.MaxQueued); set before the pool is
	// shared.
	MaxQueued int

	max      int
	idleTime time.Duration

	mu      sync.Mutex
	gone    sync.Cond // signalled when n drops to 0
	ready   []Job     // the jobs waiting for a worker, from head
	head    int
	idle    []chan struct{} // the wake-up channels of idle workers
	n       int             // workers alive
	blocked int             // workers between Block and Unblock
	closed  bool
	gids    map[uint64]bool // the workers' goroutine IDs (OnWorker)
}

// New returns a pool of at most max workers, each ending after idle
// without work.
func New(max int, idle time.Duration) *Pool {
	p := &Pool{max: max, idleTime: idle}
	p.gone.L = &p.mu
	return p
}

// Submit queues j, which must be neither queued nor running. It never
// blocks on the workers.
func (p *Pool) Submit(j Job) {
	p.mu.Lock()
	p.ready = append(p.ready, j)
	if k := len(p.idle); k > 0 {
		w := p.idle[k-1]
		p.idle = p.idle[:k-1]
		p.mu.Unlock()
		w <- struct{}{} // room for one: never blocks
		return
	}
	start := p.n-p.blocked < p.max
	if start {
		p.n++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

// pop takes the job at the head of the queue, nil if none. p.mu is held.
func (p *Pool) pop() Job {
	if p.head == len(p.ready) {
		return nil
	}
	j := p.ready[p.head]
	p.ready[p.head] = nil
	p.head++
	if p.head == len(p.ready) {
		p.ready, p.head = p.ready[:0], 0
	} else if p.head > 64 && p.head > len(p.ready)/2 {
		p.ready = p.ready[:copy(p.ready, p.ready[p.head:])]
		clear(p.ready[len(p.ready):cap(p.ready)])
		p.head = 0
	}
	return j
}

// work runs jobs until none came for idleTime, or none is left after
// Close.
func (p *Pool) work() {
	id := goid.Current()
	p.mu.Lock()
	if p.gids == nil {
		p.gids = make(map[uint64]bool)
	}
	p.gids[id] = true
	p.mu.Unlock()
	defer func() { // every return below holds p.mu
		delete(p.gids, id)
		p.exit()
	}()
	wake := make(chan struct{}, 1)
	var timer *time.Timer
	for {
		p.mu.Lock()
		j := p.pop()
		if j == nil {
			if p.closed {
				return
			}
			p.idle = append(p.idle, wake)
			p.mu.Unlock()
			if timer == nil {
				timer = time.NewTimer(p.idleTime)
			} else {
				timer.Reset(p.idleTime)
			}
			select {
			case <-wake:
				timer.Stop()
			case <-timer.C:
				p.mu.Lock()
				if i := slices.Index(p.idle, wake); i >= 0 {
					p.idle = slices.Delete(p.idle, i, i+1)
					return
				}
				p.mu.Unlock()
				<-wake // a Submit took this worker as the timer fired
			}
			continue
		}
		p.mu.Unlock()
		if j.Run() {
			p.mu.Lock()
			p.ready = append(p.ready, j) // this worker takes the head next
			p.mu.Unlock()
		}
	}
}

// Block tells the pool that a worker is about to wait for something
// other than the CPU (engine's WaitOutput: a peer that does not read), so
// that it does not count against the maximum until Unblock: the other
// jobs are not held up by it.
func (p *Pool) Block() {
	p.mu.Lock()
	p.blocked++
	start := p.head < len(p.ready) && len(p.idle) == 0 && p.n-p.blocked < p.max
	if start {
		p.n++
	}
	p.mu.Unlock()
	if start {
		go p.work()
	}
}

// Unblock ends what Block began.
func (p *Pool) Unblock() {
	p.mu.Lock()
	p.blocked--
	p.mu.Unlock()
}

// exit ends a worker. p.mu is held, and released.
func (p *Pool) exit() {
	p.n--
	if p.n == 0 {
		p.gone.Broadcast()
	}
	p.mu.Unlock()
}

// Close lets the idle workers go and waits until every job queued has
// run and every worker ended. A closed pool still runs what it is given,
// on workers that end as soon as the queue is empty.
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	for _, w := range idle {
		w <- struct{}{}
	}
	for p.n > 0 {
		p.gone.Wait()
	}
	p.mu.Unlock()
}

// Hooks for the layers over engine (websocket), which queue their own
// callbacks on an engine.Pool; engine sets them in its init.
var (
	// FromEngine returns the Pool of an *engine.Pool.
	FromEngine func(p any) *Pool
	// Hold stops the reading of an *engine.Conn while its pooled
	// callbacks hold MaxQueued bytes, and Unhold lets it read again. Both
	// run on the connection's loop.
	Hold, Unhold func(c any)
)

// Workers returns the number of workers alive.
func (p *Pool) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// OnWorker reports whether the caller is one of p's workers: engine's
// Stop, which waits for the pool, must not wait from there.
func (p *Pool) OnWorker() bool {
	id := goid.Current()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gids[id]
}
