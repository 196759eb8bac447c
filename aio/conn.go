package aio

import (
	"io"
	"net"
	"runtime"
	"weak"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// conn is a delegated connection: the watcher's duplicate of its descriptor
// and the requests pending on it.
//
// The fields above the line are set at registration and never change. The
// rest belong to the loop goroutine of lp.
type conn struct {
	w       *watcher
	lp      *loopState
	fd      int
	key     uintptr            // address of the caller's conn object
	ref     weak.Pointer[byte] // the caller's conn object, without keeping it alive
	cleanup runtime.Cleanup
	stream  bool
	network string
	laddr   net.Addr
	raddr   net.Addr
	// ---
	tag      poller.Tag
	attached bool
	released bool
	index    int // position in lp.conns
	readers  reqQueue
	writers  reqQueue
	recvBusy bool // a receive for readers.head is in flight
	sendBusy bool // a send for writers.head is in flight
	starved  bool // readers.head waits for swap space
	sendVec  [1][]byte
}

// handle runs a submitted request on the loop.
func (c *conn) handle(l *loop.Loop, r *request) {
	if c.released {
		c.releasedRequest(r)
		return
	}
	if !c.attached && !c.attach(l, r) {
		return
	}
	switch r.kind {
	case kFree, kGC:
		if r.kind == kGC {
			c.w.gcClosed.Add(1)
		}
		c.release(l, ErrConnClosed)
		c.w.pool.put(r)
	case kWrite:
		c.enqueue(l, &c.writers, r)
		if c.writers.head == r {
			c.startWrite(l)
		}
	default:
		c.enqueue(l, &c.readers, r)
		if c.readers.head == r {
			c.startRead(l)
		}
	}
}

// releasedRequest answers a request that reached the loop after the
// connection was released: a submission racing with Free, or a GC notice.
func (c *conn) releasedRequest(r *request) {
	switch r.kind {
	case kFree, kGC:
		c.w.pool.put(r)
	default:
		r.err = ErrConnClosed
		c.lp.finish(r)
	}
}

func (c *conn) attach(l *loop.Loop, r *request) bool {
	tag, err := l.Attach(c.fd, c.stream, c)
	if err != nil {
		c.released = true
		sock.Close(c.fd)
		c.w.unregister(c)
		if r.kind == kFree || r.kind == kGC {
			c.w.pool.put(r)
		} else {
			r.err = c.opError(r.op().String(), err)
			c.lp.finish(r)
		}
		return false
	}
	c.tag, c.attached = tag, true
	c.lp.addConn(c)
	return true
}

func (c *conn) enqueue(l *loop.Loop, q *reqQueue, r *request) {
	q.push(r)
	c.lp.pending(r.kind, 1)
	if !r.deadline.IsZero() {
		l.Schedule(&r.timer, r.deadline)
	}
}

// startRead submits a receive for the head reader unless one is in flight.
func (c *conn) startRead(l *loop.Loop) {
	r := c.readers.head
	if r == nil || c.recvBusy || c.starved {
		return
	}
	var buf []byte
	switch {
	case r.kind == kReadFull:
		buf = r.buf[r.size:]
	case r.buf != nil && len(r.buf) == 0:
		// A zero-length read reads nothing and is not end of file.
		c.done(l, &c.readers, r, nil)
		return
	default:
		buf = r.buf // nil: the loop's swap buffer
	}
	c.recvBusy = true
	l.Backend().Recv(c.tag, buf)
}

// startWrite submits a send of the head writer's remaining bytes.
func (c *conn) startWrite(l *loop.Loop) {
	r := c.writers.head
	if r == nil || c.sendBusy {
		return
	}
	c.sendBusy = true
	c.sendVec[0] = r.buf[r.size:]
	l.Backend().Send(c.tag, c.sendVec[:])
}

// Complete handles a backend completion for this connection.
func (c *conn) Complete(l *loop.Loop, p *poller.Completion) {
	if p.Op == poller.OpSend {
		c.sendBusy = false
		c.sendVec[0] = nil
		c.sent(l, p)
		c.startWrite(l)
		return
	}
	c.recvBusy = false
	c.received(l, p)
	c.startRead(l)
}

func (c *conn) received(l *loop.Loop, p *poller.Completion) {
	r := c.readers.head
	c.lp.stats.bytesRead.Add(uint64(p.N))
	switch {
	case p.Err == unix.ENOBUFS:
		if r.timedOut {
			c.done(l, &c.readers, r, ErrDeadline)
			return
		}
		c.lp.starve(c)
		return
	case p.Err == unix.ECANCELED:
		c.done(l, &c.readers, r, ErrDeadline)
		return
	case p.Err != 0:
		c.done(l, &c.readers, r, c.opError("read", p.Err))
		return
	case p.N == 0 && c.stream:
		c.done(l, &c.readers, r, io.EOF)
		return
	}
	if p.BufID >= 0 {
		r.buf, r.chunk = p.Buf, c.lp.swap.chunks[p.BufID]
	}
	r.size += p.N
	if r.kind == kReadFull && r.size < len(r.buf) {
		if r.timedOut {
			c.done(l, &c.readers, r, ErrDeadline)
		}
		return // startRead asks for the rest
	}
	c.done(l, &c.readers, r, nil)
}

func (c *conn) sent(l *loop.Loop, p *poller.Completion) {
	r := c.writers.head
	r.size += p.N
	c.lp.stats.bytesWritten.Add(uint64(p.N))
	switch {
	case p.Err == unix.ECANCELED:
		c.done(l, &c.writers, r, ErrDeadline)
	case p.Err != 0:
		c.done(l, &c.writers, r, c.opError("write", p.Err))
	default:
		c.done(l, &c.writers, r, nil)
	}
}

// done completes r, which is in q, with err.
func (c *conn) done(l *loop.Loop, q *reqQueue, r *request, err error) {
	q.remove(r)
	l.Unschedule(&r.timer)
	c.lp.pending(r.kind, -1)
	r.err = err
	c.lp.finish(r)
}

// expire handles a passed deadline. A request whose operation is in flight
// is cancelled and completes when the backend confirms; data that arrived
// first still wins. Any other request completes at once.
func (c *conn) expire(r *request) {
	l := c.lp.l
	r.timedOut = true
	q, busy, op := &c.readers, c.recvBusy, poller.OpRecv
	if r.kind == kWrite {
		q, busy, op = &c.writers, c.sendBusy, poller.OpSend
	}
	if q.head == r && busy {
		l.Backend().Cancel(c.tag, op)
		return
	}
	head := q.head == r
	c.done(l, q, r, ErrDeadline)
	if head && op == poller.OpRecv {
		c.starved = false
		c.startRead(l)
	} else if head {
		c.startWrite(l)
	}
}

// release ends the connection: every pending request completes with err,
// the descriptor leaves the backend and is closed.
func (c *conn) release(l *loop.Loop, err error) {
	if c.released {
		return
	}
	c.released = true
	c.cleanup.Stop()
	c.w.unregister(c)
	for c.readers.head != nil {
		c.done(l, &c.readers, c.readers.head, err)
	}
	for c.writers.head != nil {
		c.done(l, &c.writers, c.writers.head, err)
	}
	if c.attached {
		l.Release(c.tag)
		c.lp.removeConn(c)
	}
	if c.fd >= 0 {
		sock.Close(c.fd)
	}
}
