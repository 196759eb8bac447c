package http1

import (
	"sync/atomic"
	"time"
)

// pool runs handlers on a bounded set of goroutines: up to max, made as
// requests find none idle, each leaving after poolIdle without work. At
// most queue requests wait for one.
type pool struct {
	jobs    chan *exchange
	quit    chan struct{} // closed when the server stops: goroutines leave
	max     int32
	workers atomic.Int32
	idle    atomic.Int32
}

// poolIdle is how long a handler goroutine waits for work before it
// leaves, giving back its stack.
const poolIdle = 10 * time.Second

func newPool(max, queue int) *pool {
	return &pool{jobs: make(chan *exchange, queue), quit: make(chan struct{}), max: int32(max)}
}

// submit hands ex to a handler goroutine, or queues it; false if the
// queue is full.
func (p *pool) submit(ex *exchange) bool {
	select {
	case p.jobs <- ex:
	default:
		return false
	}
	if p.idle.Load() == 0 {
		p.spawn()
	}
	return true
}

// spawn starts a goroutine unless max are running.
func (p *pool) spawn() {
	for {
		n := p.workers.Load()
		if n >= p.max {
			return
		}
		if p.workers.CompareAndSwap(n, n+1) {
			go p.work()
			return
		}
	}
}

func (p *pool) work() {
	t := time.NewTimer(poolIdle)
	defer t.Stop()
	for {
		p.idle.Add(1)
		select {
		case ex := <-p.jobs:
			p.idle.Add(-1)
			ex.run()
			t.Reset(poolIdle)
		case <-p.quit:
			p.idle.Add(-1)
			p.workers.Add(-1)
			return
		case <-t.C:
			p.idle.Add(-1)
			p.workers.Add(-1)
			if len(p.jobs) > 0 {
				p.spawn() // a job came as this goroutine left
			}
			return
		}
	}
}

// stop makes the idle goroutines leave, and the busy ones once their
// handler returns.
func (p *pool) stop() { close(p.quit) }
