package httpd

import (
	"sync"
	"time"
)

// pool runs handlers on goroutines that it keeps for reuse: a request
// goes to an idle goroutine if there is one and to a new one otherwise,
// so a request never waits for another's handler (each goroutine has its
// own hand-off channel, taken off the idle list under the lock: two
// requests submitted back to back cannot land on one goroutine). With
// max set (Server.MaxHandlers) at most max handlers run; a request
// beyond them is refused at once, never queued. A handler that hijacks
// its connection gives its place back (release): it runs on as the
// connection's reader, outside the count. A janitor ends the goroutines
// idle for poolIdle, so a burst's goroutines give back their stacks.
type pool struct {
	max int // 0 for no bound

	mu      sync.Mutex
	idle    []*worker // oldest first; the newest is reused first
	busy    int       // handlers running and counted against max
	started [2]uint64 // handlers started, HTTP/1 exchanges and HTTP/2 streams (Stats.Requests)
	epoch   uint64    // the janitor's rounds
	stopped bool
	quit    chan struct{} // closed by stop: ends the janitor
}

// worker is a pooled goroutine; its channel holds at most the one
// request it is handed while idle (nil: leave).
type worker struct {
	jobs  chan job
	since uint64 // the janitor's round when it became idle
}

// poolIdle is how often the janitor looks: it ends the goroutines that
// were idle when it last looked and have stayed so (idle for poolIdle to
// twice that).
const poolIdle = 10 * time.Second

// job is what a pooled goroutine runs: an HTTP/1 exchange or an HTTP/2
// stream. run reports whether the handler took its connection with
// Hijack, which released its place in the pool.
type job interface{ run() bool }

func newPool(max int) *pool {
	p := &pool{max: max, quit: make(chan struct{})}
	go p.janitor()
	return p
}

// submit hands ex to an idle goroutine or a new one, and reports false,
// without waiting, when max handlers run (or the pool has stopped).
func (p *pool) submit(ex job) bool {
	p.mu.Lock()
	if p.stopped || p.max > 0 && p.busy >= p.max {
		p.mu.Unlock()
		return false
	}
	p.busy++
	p.started[protoIndex(ex)]++
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.jobs <- ex // never blocks: an idle worker's channel is empty
		return true
	}
	p.mu.Unlock()
	go p.work(&worker{jobs: make(chan job, 1)}, ex)
	return true
}

// work runs ex, then the requests it is handed while idle.
func (p *pool) work(w *worker, ex job) {
	for ex != nil {
		if ex.run() {
			return // hijacked: released, so this goroutine is no longer the pool's
		}
		if !p.rest(w) {
			return
		}
		ex = <-w.jobs
	}
}

// rest ends a handler's turn: w becomes idle, or leaves if the pool has
// stopped.
func (p *pool) rest(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy--
	if p.stopped {
		return false
	}
	w.since = p.epoch
	p.idle = append(p.idle, w)
	return true
}

// release takes a running handler out of the count (its connection was
// hijacked): its goroutine ends when the handler returns.
func (p *pool) release() {
	p.mu.Lock()
	p.busy--
	p.mu.Unlock()
}

// running returns the handlers counted against max.
func (p *pool) running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.busy
}

func (p *pool) janitor() {
	t := time.NewTicker(poolIdle)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			p.retire()
		case <-p.quit:
			return
		}
	}
}

// retire ends the goroutines idle since before the janitor's last
// round, and starts a new round.
func (p *pool) retire() {
	p.mu.Lock()
	p.epoch++
	n := 0
	for n < len(p.idle) && p.idle[n].since+1 < p.epoch {
		n++
	}
	if n == 0 {
		p.mu.Unlock()
		return
	}
	old := p.idle[:n:n]
	p.idle = append([]*worker(nil), p.idle[n:]...)
	p.mu.Unlock()
	for _, w := range old {
		w.jobs <- nil
	}
}

// stop ends the idle goroutines now and the busy ones once their handler
// returns; submit refuses from now on.
func (p *pool) stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	close(p.quit)
	for _, w := range idle {
		w.jobs <- nil
	}
}
