package aio

import (
	"net"
	"sync"
	"time"

	"github.com/galeio/gale/internal/loop"
)

// kind is what a request asks the loop to do.
type kind uint8

const (
	kRead       kind = iota // Read, ReadTimeout
	kReadFull               // ReadFull
	kWrite                  // Write, WriteTimeout
	kCloseWrite             // CloseWrite: shut down sending after the writes before it
	kFree                   // Free: release the connection
	kGC                     // the connection became unreachable
)

// silent reports whether requests of kind k produce no completion: they
// go back to the pool once done, however they end.
func (k kind) silent() bool { return k >= kCloseWrite }

// request is one submitted operation: gaio's aiocb. It travels from the
// submitting goroutine to the loop (as a loop.Task), lives in its
// connection's queue while pending, and reaches WaitIO through the
// completion queue. Requests are recycled at the WaitIO after the one that
// returned them.
type request struct {
	ctx   any
	conn  net.Conn
	c     *conn // nil when the connection could not be delegated
	buf   []byte
	size  int
	err   error
	tm    *reqTimer  // the deadline; made for the first request that has one
	chunk *swapChunk // the swap chunk Buf points into, for nil-buffer reads
	prev  *request   // links in the connection's queue
	next  *request
	// The small fields last, together: a request is 128 bytes
	// (TestRequestSize), and each pending read holds one.
	kind     kind
	timedOut bool
	queued   bool
}

func (r *request) op() OpType {
	if r.kind == kWrite {
		return OpWrite
	}
	return OpRead
}

// Run executes the request on its connection's loop.
func (r *request) Run(l *loop.Loop) { r.c.handle(l, r) }

// reqPool recycles requests. A plain locked stack, not a sync.Pool: the
// garbage collector empties a sync.Pool, and every refill is an allocation
// on the steady-state path.
type reqPool struct {
	mu   sync.Mutex
	free []*request
}

func (p *reqPool) get() *request {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		r := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return r
	}
	p.mu.Unlock()
	return &request{}
}

// put recycles r. It keeps r's deadline timer, if any, so a program that
// sets deadlines does not make one per request.
func (p *reqPool) put(r *request) {
	tm := r.tm
	*r = request{tm: tm}
	if tm != nil {
		tm.deadline = time.Time{}
	}
	p.mu.Lock()
	p.free = append(p.free, r)
	p.mu.Unlock()
}

// reqTimer is a request's deadline and its loop timer. Requests without a
// deadline, the common case, carry only a nil pointer: a pending read per
// idle connection stays small.
type reqTimer struct {
	deadline time.Time
	t        loop.Timer
}

// setDeadline records r's deadline; zero means none.
func (r *request) setDeadline(d time.Time) {
	switch {
	case !d.IsZero() && r.tm == nil:
		r.tm = &reqTimer{}
		r.tm.t.Fire = r.expire
		fallthrough
	case r.tm != nil:
		r.tm.deadline = d
	}
}

// expire is the request's deadline timer callback.
func (r *request) expire(time.Time) { r.c.expire(r) }

// reqQueue is a connection's FIFO of pending requests in one direction.
// Doubly linked, so a request whose deadline passes leaves from anywhere.
type reqQueue struct {
	head, tail *request
	n          int
}

func (q *reqQueue) push(r *request) {
	r.prev, r.next, r.queued = q.tail, nil, true
	if q.tail != nil {
		q.tail.next = r
	} else {
		q.head = r
	}
	q.tail = r
	q.n++
}

func (q *reqQueue) remove(r *request) {
	if r.prev != nil {
		r.prev.next = r.next
	} else {
		q.head = r.next
	}
	if r.next != nil {
		r.next.prev = r.prev
	} else {
		q.tail = r.prev
	}
	r.prev, r.next, r.queued = nil, nil, false
	q.n--
}
