package netconn

import (
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// writer is the sending half of a Conn. A Write writes what the socket
// takes at once, from the caller's goroutine; the rest goes to the loop
// as one send of the caller's slice, and Write parks until it completes.
type writer struct {
	c      *Conn
	serial sync.Mutex // one Write at a time; held while parked

	mu      sync.Mutex // guards waiting, n, err; loop and writers
	waiting bool
	n       int
	err     error
	ready   chan struct{}

	deadline atomic.Int64 // unix nanoseconds; 0 none

	// Owned by the loop goroutine; bufs is set by the parked Write.
	bufs    [1][]byte
	sending bool
	timer   loop.Timer
}

func (w *writer) init(c *Conn) {
	w.c, w.ready = c, make(chan struct{}, 1)
	w.timer.Fire = w.fire
}

// Write writes p whole, or fails: after the write deadline (an error
// matching os.ErrDeadlineExceeded), after Close (net.ErrClosed), or when
// the connection fails; n counts the bytes written before. Errors are
// *net.OpError.
func (c *Conn) Write(p []byte) (int, error) {
	w := &c.wr
	w.serial.Lock()
	defer w.serial.Unlock()
	if c.closed.Load() {
		return 0, c.opError("write", net.ErrClosed)
	}
	if passed(w.deadline.Load()) {
		return 0, c.opError("write", errTimeout)
	}
	n := 0
	for n < len(p) {
		fd, ok := c.fd.Acquire()
		if !ok {
			return n, c.opError("write", net.ErrClosed)
		}
		k, errno := sock.Write(fd, p[n:])
		c.fd.Release()
		n += max(k, 0)
		switch errno {
		case 0:
		case syscall.EAGAIN:
			k, err := w.wait(p[n:])
			return n + k, err
		default:
			return n, c.opError("write", errno)
		}
	}
	return n, nil
}

// wait has the loop send b and parks until it is sent or stopped.
func (w *writer) wait(b []byte) (int, error) {
	w.mu.Lock()
	w.bufs[0] = b
	w.waiting, w.n, w.err = true, 0, nil
	w.mu.Unlock()
	if w.c.post((*sendTask)(w)) != nil {
		w.complete(0, w.c.opError("write", net.ErrClosed))
	}
	<-w.ready
	return w.n, w.err
}

// complete ends a parked Write. Safe from any goroutine.
func (w *writer) complete(n int, err error) {
	w.mu.Lock()
	if w.waiting {
		w.waiting, w.n, w.err = false, n, err
		w.bufs[0] = nil
		w.ready <- struct{}{}
	}
	w.mu.Unlock()
}

// wake ends a parked Write that the loop no longer serves.
func (w *writer) wake(err error) { w.complete(0, err) }

// setDeadline applies a new write deadline, to a parked Write too.
func (w *writer) setDeadline(t time.Time) {
	w.deadline.Store(nanos(t))
	w.mu.Lock()
	parked := w.waiting
	w.mu.Unlock()
	if parked {
		w.c.post((*retimeTask)(w))
	}
}

// sendTask submits a parked Write's remaining bytes.
type sendTask writer

func (t *sendTask) Run(l *loop.Loop) {
	w := (*writer)(t)
	if w.c.closed.Load() || !w.c.attach(l) {
		w.complete(0, w.c.opError("write", net.ErrClosed))
		return
	}
	w.sending = true
	l.Send(w.c.tag, w.bufs[:])
	w.retime(l)
}

// retimeTask moves the loop's timer to a changed write deadline.
type retimeTask writer

func (t *retimeTask) Run(l *loop.Loop) { (*writer)(t).retime(l) }

// retime sets the timer for the deadline of the send in flight, or
// cancels the send when the deadline has passed. Loop goroutine only.
func (w *writer) retime(l *loop.Loop) {
	if !w.sending {
		return
	}
	d := w.deadline.Load()
	switch {
	case d == 0:
		l.Unschedule(&w.timer)
	case passed(d):
		l.Unschedule(&w.timer)
		l.Cancel(w.c.tag, loop.OpSend)
	default:
		l.Schedule(&w.timer, time.Unix(0, d))
	}
}

func (w *writer) fire(time.Time) { w.retime(w.c.lp.l) }

// completed takes a send's result. Loop goroutine only.
func (w *writer) completed(l *loop.Loop, cp loop.Completion) {
	w.sending = false
	l.Unschedule(&w.timer)
	var err error
	switch {
	case cp.N() >= len(w.bufs[0]) && cp.Errno() == 0:
		// sent whole, whatever stopped it afterwards
	case cp.Errno() != 0:
		err = w.c.opError("write", cp.Errno())
	case cp.Canceled() && w.c.closed.Load():
		err = w.c.opError("write", net.ErrClosed)
	case cp.Canceled():
		err = w.c.opError("write", errTimeout)
	}
	w.complete(cp.N(), err)
}
