package aio

import (
	"io"
	"runtime"
	"weak"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// conn is a delegated connection: the watcher's duplicate of its descriptor
// and the requests pending on it.
//
// The fields above the line are set at registration and never change. The
// rest belong to the loop goroutine of lp.
type conn struct {
	w  *watcher
	lp *loopState
	// fd is the watcher's duplicate. The loop closes it or hands it to
	// Detach; a Free or Close that loses a race with the loop's exit
	// closes it from another goroutine (watcher.orphan, sweep). Close acts
	// once, whoever calls it first.
	fd      sock.FD
	key     uintptr            // address of the caller's conn object
	ref     weak.Pointer[byte] // the caller's conn object, without keeping it alive
	cleanup runtime.Cleanup
	stream  bool
	// callerOpen: the caller's conn is still open. Set when the entry is
	// made, cleared by whoever closes it, both under the shard's lock, so
	// it is closed once (register, take, takeOrClose).
	callerOpen bool
	// ---
	tag      loop.Tag
	attached bool
	released bool
	closeErr error    // what requests get once released
	handOff  chan int // Detach: receives the descriptor instead of closing it
	index    int32    // position in lp.conns
	readers  reqQueue
	writers  reqQueue
	recvBusy bool // a receive for readers.head is in flight
	sendBusy bool // a send for writers.head is in flight
	starved  bool // readers.head waits for swap space
	wrShut   bool // a CloseWrite shut the sending side: writes fail
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
	case kWrite, kCloseWrite:
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
	if r.kind.silent() {
		c.w.pool.put(r)
		return
	}
	r.err = ErrConnClosed
	c.lp.finish(r)
}

func (c *conn) attach(l *loop.Loop, r *request) bool {
	tag, err := l.Attach(c.fd.Sysfd(), c.stream, c)
	if err != nil {
		c.released = true
		c.fd.Close()
		c.w.unregister(c)
		if r.kind.silent() {
			c.w.pool.put(r)
		} else {
			r.err = opError(r.conn, r.op().String(), err)
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
	if !r.kind.silent() {
		c.lp.pending(r.kind, 1)
	}
	if r.tm != nil && !r.tm.deadline.IsZero() {
		l.Schedule(&r.tm.t, r.tm.deadline)
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
	l.Recv(c.tag, buf)
}

// startWrite submits a send of the head writer's remaining bytes. A
// CloseWrite at the head shuts the sending side down, and writes that
// reach the head after that fail (closewrite.go).
func (c *conn) startWrite(l *loop.Loop) {
	for {
		r := c.writers.head
		if r == nil || c.sendBusy {
			return
		}
		if r.kind == kCloseWrite || c.wrShut {
			c.closedWrite(l, r)
			continue
		}
		c.sendBusy = true
		c.sendVec[0] = r.buf[r.size:]
		l.Send(c.tag, c.sendVec[:])
		return
	}
}

// Complete handles a backend completion for this connection.
func (c *conn) Complete(l *loop.Loop, p loop.Completion) {
	if c.released {
		c.drain(l, p)
		return
	}
	if p.Op() == loop.OpSend {
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

func (c *conn) received(l *loop.Loop, p loop.Completion) {
	r := c.readers.head
	c.lp.stats.bytesRead.Add(uint64(p.N()))
	switch {
	case p.NoSpace(): // the swap buffer is full: wait for WaitIO
		if r.timedOut {
			c.done(l, &c.readers, r, ErrDeadline)
			return
		}
		c.lp.starve(c)
		return
	case p.Canceled():
		c.done(l, &c.readers, r, ErrDeadline)
		return
	case p.Errno() != 0:
		c.done(l, &c.readers, r, opError(r.conn, "read", p.Errno()))
		return
	case p.N() == 0 && c.stream:
		c.done(l, &c.readers, r, io.EOF)
		return
	}
	if id := p.Space(); id >= 0 {
		r.buf, r.chunk = p.Bytes(), c.lp.swap.chunks[id]
	}
	r.size += p.N()
	if r.kind == kReadFull && r.size < len(r.buf) {
		if r.timedOut {
			c.done(l, &c.readers, r, ErrDeadline)
		}
		return // startRead asks for the rest
	}
	c.done(l, &c.readers, r, nil)
}

func (c *conn) sent(l *loop.Loop, p loop.Completion) {
	r := c.writers.head
	r.size += p.N()
	c.lp.stats.bytesWritten.Add(uint64(p.N()))
	switch {
	case p.Canceled():
		c.done(l, &c.writers, r, ErrDeadline)
	case p.Errno() != 0:
		c.done(l, &c.writers, r, opError(r.conn, "write", p.Errno()))
	default:
		c.done(l, &c.writers, r, nil)
	}
}

// done completes r, which is in q, with err.
func (c *conn) done(l *loop.Loop, q *reqQueue, r *request, err error) {
	q.remove(r)
	if r.tm != nil {
		l.Unschedule(&r.tm.t)
	}
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
	q, busy, op := &c.readers, c.recvBusy, loop.OpRecv
	if r.kind == kWrite {
		q, busy, op = &c.writers, c.sendBusy, loop.OpSend
	}
	if q.head == r && busy {
		l.Cancel(c.tag, op)
		return
	}
	head := q.head == r
	c.done(l, q, r, ErrDeadline)
	if head && op == loop.OpRecv {
		c.starved = false
		c.startRead(l)
	} else if head {
		c.startWrite(l)
	}
}

// release ends the connection. Requests pending on it complete with err.
// An operation in flight is cancelled first, so that its request reports
// the bytes it moved (a write cut short leaves its first Size bytes in the
// stream); once nothing is in flight the descriptor leaves the backend and
// is closed, or handed to handOff (Detach).
func (c *conn) release(l *loop.Loop, err error) {
	if c.released {
		return
	}
	c.released, c.closeErr = true, err
	c.cleanup.Stop()
	c.w.unregister(c)
	c.failQueued(l, &c.readers, c.recvBusy)
	c.failQueued(l, &c.writers, c.sendBusy)
	if c.recvBusy {
		l.Cancel(c.tag, loop.OpRecv)
	}
	if c.sendBusy {
		l.Cancel(c.tag, loop.OpSend)
	}
	c.finalize(l)
}

// failQueued completes the requests of q with closeErr, except a head
// whose operation is in flight: its completion finishes it. A CloseWrite
// waiting in q is dropped: it has no completion, and the release closes
// the socket anyway.
func (c *conn) failQueued(l *loop.Loop, q *reqQueue, busy bool) {
	r := q.head
	if busy && r != nil {
		r = r.next
	}
	for r != nil {
		next := r.next
		if r.kind.silent() {
			q.remove(r)
			c.w.pool.put(r)
		} else {
			c.done(l, q, r, c.closeErr)
		}
		r = next
	}
}

// drain finishes the in-flight request of a released connection with the
// outcome of its cancelled operation: bytes that moved before the
// cancellation took effect count, and a request they completed succeeds.
func (c *conn) drain(l *loop.Loop, p loop.Completion) {
	q := &c.readers
	if p.Op() == loop.OpSend {
		q, c.sendBusy = &c.writers, false
	} else {
		c.recvBusy = false
	}
	if r := q.head; r != nil {
		err := c.closeErr
		if p.Errno() == 0 && !p.Canceled() && !p.NoSpace() && p.N() > 0 {
			if id := p.Space(); id >= 0 {
				r.buf, r.chunk = p.Bytes(), c.lp.swap.chunks[id]
			}
			r.size += p.N()
			if r.kind == kRead || r.size == len(r.buf) {
				err = nil
			}
		} else if p.Op() == loop.OpSend {
			r.size += p.N()
		}
		c.done(l, q, r, err)
	}
	c.finalize(l)
}

// finalize removes a released connection from its loop once no operation
// is in flight.
func (c *conn) finalize(l *loop.Loop) {
	if c.recvBusy || c.sendBusy || c.fd.Closed() {
		return
	}
	if c.attached {
		l.Release(c.tag)
		c.lp.removeConn(c)
	}
	if c.handOff != nil {
		c.fd.HandOff(c.handOff)
		c.handOff = nil
	} else {
		c.fd.Close()
	}
}

// abort releases the connection at once, the loop being about to exit:
// requests pending complete with err, except those whose operation is in
// flight. Those are dropped (Close: the loop delivers nothing more) or,
// with strand, kept for watcher.stop to deliver once the backend is
// closed, when the kernel no longer uses their buffers (a loop failure).
func (c *conn) abort(l *loop.Loop, err error, strand bool) {
	c.release(l, err)
	if c.fd.Closed() {
		return
	}
	if strand && c.recvBusy {
		c.strand(l, &c.readers, err)
	}
	if strand && c.sendBusy {
		c.strand(l, &c.writers, err)
	}
	c.recvBusy, c.sendBusy = false, false
	if c.handOff != nil {
		c.fd.Close()
		c.handOff <- -1
		c.handOff = nil
	}
	c.finalize(l)
}
