package netconn

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/loop"
)

// stashCap is how many received bytes a connection holds for a Read that
// has not come yet: past it the loop stops receiving, and TCP's flow
// control holds the peer back.
const stashCap = 64 << 10

// stashes recycles the buffers of bytes received ahead of Read. A
// connection holds one only while such bytes wait: an idle one holds none.
var stashes = sync.Pool{New: func() any { b := make([]byte, 0, stashCap); return &b }}

// reader is the receiving half of a Conn. The loop keeps one receive
// armed once a Read first waited, copying what arrives into the parked
// Read's slice, and what is left over into the stash; a Read takes from
// the stash first.
type reader struct {
	c      *Conn
	serial sync.Mutex // one Read at a time; held while parked

	mu      sync.Mutex // guards the fields down to ready; loop and readers
	stash   *[]byte    // received ahead of Read (pooled), from off
	off     int
	err     error // io.EOF or the receive's failure: every later Read's
	closed  bool
	started bool // the loop was asked to receive
	paused  bool // the loop stopped receiving: the stash is full
	held    bool // the loop stopped receiving for a hand-over
	waiting bool // a Read is parked on ready with dst
	dst     []byte
	n       int   // the parked Read's result, set by whoever wakes it
	werr    error // ...
	ready   chan struct{}

	deadline atomic.Int64 // unix nanoseconds; 0 none
	timerAt  atomic.Int64 // when the loop's timer fires; 0 not set

	// Owned by the loop goroutine.
	armed bool // a receive is in flight
	timer loop.Timer
	hold  chan struct{} // closed once a hand-over's cancel completed
}

func (r *reader) init(c *Conn, buffered []byte) {
	r.c, r.ready = c, make(chan struct{}, 1)
	r.timer.Fire = r.fire
	if len(buffered) > 0 {
		r.push(buffered)
	}
}

// Read reads up to len(p) bytes. It returns io.EOF once the peer closed
// its side and every byte before was read; after the read deadline, an
// error matching os.ErrDeadlineExceeded with n == 0; after Close,
// net.ErrClosed. Errors other than io.EOF are *net.OpError.
func (c *Conn) Read(p []byte) (int, error) {
	r := &c.rd
	r.serial.Lock()
	defer r.serial.Unlock()
	r.mu.Lock()
	if err := r.check(); err != nil {
		r.mu.Unlock()
		return 0, err
	}
	if len(p) == 0 {
		r.mu.Unlock()
		return 0, nil
	}
	if r.stash != nil {
		n := copy(p, (*r.stash)[r.off:])
		r.off += n
		resume := r.consumed()
		r.mu.Unlock()
		if resume {
			c.post((*readTask)(r))
		}
		return n, nil
	}
	if r.err != nil {
		err := r.err
		r.mu.Unlock()
		return 0, err
	}
	r.waiting, r.dst, r.n, r.werr = true, p, 0, nil
	post := !r.started || r.needTimer()
	r.started = true
	r.mu.Unlock()
	if post && c.post((*readTask)(r)) != nil {
		r.wake(0, c.opError("read", net.ErrClosed), false)
	}
	<-r.ready
	return r.n, r.werr
}

// check returns the error a Read meets before it starts. r.mu held.
func (r *reader) check() error {
	if r.closed {
		return r.c.opError("read", net.ErrClosed)
	}
	if passed(r.deadline.Load()) {
		return r.c.opError("read", errTimeout)
	}
	return nil
}

// consumed gives the stash back once it is empty and reports whether the
// loop must be asked to receive again. r.mu held.
func (r *reader) consumed() bool {
	left := len(*r.stash) - r.off
	if left == 0 {
		*r.stash = (*r.stash)[:0]
		stashes.Put(r.stash)
		r.stash, r.off = nil, 0
	}
	if r.paused && left < stashCap/2 && !r.held {
		r.paused = false
		return true
	}
	return false
}

// push appends b to the stash. r.mu held (or r not yet shared).
func (r *reader) push(b []byte) {
	if r.stash == nil {
		r.stash = stashes.Get().(*[]byte)
	}
	*r.stash = append(*r.stash, b...)
}

// needTimer reports whether the loop's timer must be set for the
// deadline. r.mu held.
func (r *reader) needTimer() bool {
	d := r.deadline.Load()
	at := r.timerAt.Load()
	return d != 0 && (at == 0 || at > d)
}

// wake ends a parked Read with n and err; closing also marks r closed.
// Safe from any goroutine.
func (r *reader) wake(n int, err error, closing bool) {
	r.mu.Lock()
	if closing {
		r.closed = true
	}
	r.wakeLocked(n, err)
	r.mu.Unlock()
}

func (r *reader) wakeLocked(n int, err error) {
	if !r.waiting {
		return
	}
	r.waiting, r.dst, r.n, r.werr = false, nil, n, err
	r.ready <- struct{}{}
}

// failed makes err the result of every Read from now on.
func (r *reader) failed(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.wakeLocked(0, err)
	r.mu.Unlock()
}

// setDeadline applies a new read deadline, to a parked Read too.
func (r *reader) setDeadline(t time.Time) {
	r.deadline.Store(nanos(t))
	r.mu.Lock()
	post := false
	if r.waiting {
		if passed(r.deadline.Load()) {
			r.wakeLocked(0, r.c.opError("read", errTimeout))
		} else {
			post = r.needTimer()
		}
	}
	r.mu.Unlock()
	if post {
		r.c.post((*readTask)(r))
	}
}

// dropStash lets go of the stash of a closed conn.
func (r *reader) dropStash() {
	r.mu.Lock()
	if r.stash != nil {
		*r.stash = (*r.stash)[:0]
		stashes.Put(r.stash)
		r.stash, r.off = nil, 0
	}
	r.mu.Unlock()
}

// readTask asks the loop to receive (once, or again after a pause) and
// to set its timer for the deadline.
type readTask reader

func (t *readTask) Run(l *loop.Loop) {
	r := (*reader)(t)
	if !r.c.attach(l) {
		return
	}
	r.arm(l)
	r.retime(l)
}

// arm submits a receive unless one is in flight or reading is paused.
// Loop goroutine only.
func (r *reader) arm(l *loop.Loop) {
	if r.armed || r.c.closing {
		return
	}
	r.mu.Lock()
	ok := r.err == nil && !r.closed && !r.paused && !r.held
	r.mu.Unlock()
	if ok {
		r.armed = true
		l.Recv(r.c.tag, nil)
	}
}

// retime sets the loop's timer for the read deadline.
func (r *reader) retime(l *loop.Loop) {
	d := r.deadline.Load()
	if d == 0 {
		return // a timer set for an earlier deadline finds none and stops
	}
	if at := r.timerAt.Load(); at != 0 && at <= d {
		return // it fires first, and moves itself on to d
	}
	r.timerAt.Store(d)
	l.Schedule(&r.timer, time.Unix(0, d))
}

// fire runs on the loop when the timer passes: it times out a parked
// Read, or moves on to a later deadline.
func (r *reader) fire(now time.Time) {
	d := r.deadline.Load()
	if d == 0 {
		r.timerAt.Store(0)
		return
	}
	if now.UnixNano() < d {
		r.timerAt.Store(d)
		r.c.lp.l.Schedule(&r.timer, time.Unix(0, d))
		return
	}
	r.timerAt.Store(0)
	r.c.lp.woke = true
	r.mu.Lock()
	r.wakeLocked(0, r.c.opError("read", errTimeout))
	r.mu.Unlock()
}

// completed takes a receive's result. Loop goroutine only.
func (r *reader) completed(l *loop.Loop, cp loop.Completion) {
	r.armed = false
	if cp.NoSpace() {
		r.arm(l)
		return
	}
	b := cp.Bytes()
	r.mu.Lock()
	switch {
	case len(b) > 0:
		if r.waiting {
			n := copy(r.dst, b)
			b = b[n:]
			r.wakeLocked(n, nil)
		}
		if len(b) > 0 {
			r.push(b)
		}
	case cp.Errno() != 0:
		if r.err == nil {
			r.err = r.c.opError("read", cp.Errno())
		}
		r.wakeLocked(0, r.err)
	case !cp.Canceled():
		if r.err == nil {
			r.err = io.EOF
		}
		r.wakeLocked(0, io.EOF)
	}
	if r.stash != nil && len(*r.stash)-r.off >= stashCap {
		r.paused = true
	}
	again := r.err == nil && !r.closed && !r.paused && !r.held && !cp.Canceled()
	r.mu.Unlock()
	if again && !r.c.closing {
		r.armed = true
		l.Recv(r.c.tag, nil)
	}
	if r.hold != nil && !r.armed {
		close(r.hold)
		r.hold = nil
	}
}
