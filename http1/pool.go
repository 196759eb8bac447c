package http1

import (
	"sync/atomic"
	"time"
)

// pool runs handlers on a bounded set of goroutines: up to max, made as
// requests find none idle. At most queue requests wait for one. A worker
// takes its next request with a plain channel receive (no timer per
// request); a janitor retires half of the idle workers every poolIdle by
// handing them a nil request, so a burst's goroutines give back their
// stacks.
type pool struct {
	jobs    chan *exchange
	quit    chan struct{} // closed when the server stops
	max     int32
	workers atomic.Int32
	idle    atomic.Int32
}

// poolIdle is how often the janitor retires idle workers.
const poolIdle = 10 * time.Second

func newPool(max, queue int) *pool {
	p := &pool{jobs: make(chan *exchange, queue), quit: make(chan struct{}), max: int32(max)}
	go p.janitor()
	return p
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
	for {
		p.idle.Add(1)
		ex := <-p.jobs
		p.idle.Add(-1)
		if ex == nil {
			p.workers.Add(-1)
			if len(p.jobs) > 0 && p.idle.Load() == 0 {
				p.spawn() // a request came as this goroutine left
			}
			return
		}
		ex.run()
	}
}

// retire asks n idle workers to leave.
func (p *pool) retire(n int32) {
	for ; n > 0; n-- {
		select {
		case p.jobs <- nil:
		default:
			return
		}
	}
}

func (p *pool) janitor() {
	t := time.NewTicker(poolIdle)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.retire(p.idle.Load() / 2)
		case <-p.quit:
			// Every worker leaves once the requests queued before it
			// are served: the server has stopped, so no more come.
			for n := p.workers.Load(); n > 0; n-- {
				p.jobs <- nil
			}
			return
		}
	}
}

// stop makes the workers leave, the busy ones once their handler
// returns.
func (p *pool) stop() { close(p.quit) }
