package engine

import (
	"net"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// maxVec is the most chunks one send takes (IOV_MAX).
const maxVec = 1024

// Write queues p for c and returns len(p), or an error: net.ErrClosed
// (wrapped) once c is closing, ErrWriteBufferFull when the bytes already
// queued have reached Options.MaxWriteBuffer (c then closes with that
// error, and every later Write fails with net.ErrClosed). A Write that
// fails writes nothing. p is copied when it cannot be written at once, so
// the caller may reuse it as soon as Write returns.
//
// When nothing is queued, Write writes to the socket directly, from the
// calling goroutine, so an echo or a reply from OnData costs one system
// call and no copy. On io_uring, a Write of up to 16 KiB made while c's
// OnData runs (from that callback or any other goroutine) is queued
// instead and sent, batched, when OnData returns: OutboundBuffered may
// then be non-zero for a moment though the peer keeps up.
//
// On a TLS connection Write encrypts p on the calling goroutine, into
// records that take this path; the count is of p's bytes.
func (c *Conn) Write(p []byte) (int, error) {
	if c.kind.has(kTLS) {
		return c.writeTLS(p)
	}
	return c.writeRaw(p)
}

// writeRaw is Write without TLS: p goes to the socket as it is.
func (c *Conn) writeRaw(p []byte) (int, error) {
	one := [1][]byte{p} // stays on the stack: writeLocked keeps no reference
	c.mu.Lock()
	n, err := c.writeLocked(one[:])
	if c.mbits.has(bAlert) {
		c.tlsOf().alert += n
	}
	c.mu.Unlock()
	return n, err
}

// Writev writes the buffers of bufs in order, as one Write: writes from
// other goroutines do not land between them.
func (c *Conn) Writev(bufs [][]byte) (int, error) {
	if c.kind.has(kTLS) {
		return c.writevTLS(bufs)
	}
	c.mu.Lock()
	n, err := c.writeLocked(bufs)
	c.mu.Unlock()
	return n, err
}

// writeLocked writes what the socket takes at once when nothing is
// queued, and queues the rest. c.mu is held.
func (c *Conn) writeLocked(bufs [][]byte) (int, error) {
	if c.kind.has(kUDP) {
		return 0, c.opError("write", errUDPWrite)
	}
	if c.mbits.has(bDead) || c.mbits.has(bShutWrite) {
		return 0, c.opError("write", net.ErrClosed)
	}
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	if total == 0 {
		return 0, nil
	}
	if q := c.q; q != nil && !q.writeBy.IsZero() && !c.lp.e.clock.Now().Before(q.writeBy) {
		return 0, c.opError("write", ErrWriteDeadline)
	}
	if n := c.outN(); n > 0 && n >= c.lp.e.opts.MaxWriteBuffer {
		// The backlog is full: c ends, and with it every later Write (its
		// bytes would follow a hole).
		c.mbits.set(bDead, true)
		c.post(loop.Func(func(*loop.Loop) { c.fail(ErrWriteBufferFull) }))
		return 0, ErrWriteBufferFull
	}
	skip := 0
	batch := c.mbits.has(bBatching) && total <= batchMax
	if c.outN() == 0 && !c.mbits.has(bSending) && !batch {
		// Activity is stamped before the write: once the bytes are out,
		// the peer may act (and a test's clock move) before a later stamp.
		c.touch()
		w, errno := c.writeNow(bufs)
		if errno != 0 && errno != syscall.EAGAIN {
			return 0, c.writeFailed(errno)
		}
		c.lp.stats.bytesOut.Add(uint64(w))
		if w == total {
			return total, nil
		}
		skip = w
	}
	if err := c.postFlush(); err != nil {
		return skip, err
	}
	for _, b := range bufs {
		k := min(skip, len(b))
		skip -= k
		c.enqueue(b[k:])
	}
	c.lp.e.charge(c)
	return total, nil
}

// postFlush posts the flush task for bytes about to be queued, unless one
// is pending or the loop's flush after OnData will send them (a batch).
// It posts before the bytes are queued, with c.mu held, so the write's
// fate is decided first: if the loop no longer takes tasks, it is
// stopping and will close c without sending its queue, so this write
// fails with nothing queued and so does every later one. (Queued first,
// the bytes of a write that then failed could still go out with a send
// the stopping loop completes.) The flush takes c.mu, so it cannot run
// before the bytes are queued. c.mu is held.
func (c *Conn) postFlush() error {
	if c.mbits.has(bFlushPosted) || c.mbits.has(bBatching) {
		return nil
	}
	if err := c.post((*flushTask)(c)); err != nil {
		c.mbits.set(bDead, true)
		return err
	}
	c.mbits.set(bFlushPosted, true)
	return nil
}

// writeFailed ends c after a direct write failed with errno, and returns
// the write's error. No later Write may succeed: its bytes would follow a
// hole in the stream. The loop learns of a reset or a broken pipe from its
// next receive too, but not of ENOMEM or ENOBUFS, which leave the socket
// open; so the write's error closes c, as a failed send does (sent). c.mu
// is held.
func (c *Conn) writeFailed(errno syscall.Errno) error {
	err := c.opError("write", errno)
	c.mbits.set(bDead, true)
	c.post(loop.Func(func(*loop.Loop) { c.fail(err) }))
	return err
}

// batchMax is the largest write a loop batches (see eloop.batch); a
// larger one is written at once, its copy costing more than the call.
const batchMax = 16 << 10

// directVec is the most buffers writeNow passes to one writev; the rest
// of a longer Writev is queued, as a short write's would be.
const directVec = 64

// writeNow writes bufs with one write or writev. c.mu is held.
func (c *Conn) writeNow(bufs [][]byte) (int, syscall.Errno) {
	fd, ok := c.fd.Acquire()
	if !ok {
		return 0, syscall.EBADF // not reached: c is dead before its fd closes
	}
	defer c.fd.Release()
	if len(bufs) == 1 {
		return sock.Write(fd, bufs[0])
	}
	var iov [directVec]sock.Iovec // on the stack: nothing keeps it
	n := 0
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		if n == len(iov) {
			break
		}
		iov[n] = sock.Iovec{Base: &b[0]}
		iov[n].SetLen(len(b))
		n++
	}
	return sock.Writev(fd, iov[:n])
}

// OutboundBuffered returns the number of bytes queued and not yet written.
func (c *Conn) OutboundBuffered() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.outN()
}

// outN returns the bytes queued. c.mu is held.
func (c *Conn) outN() int {
	if c.q == nil {
		return 0
	}
	return c.q.n
}

// CloseWrite shuts down c's sending side once its queued output is
// written; the peer reads end of file, and c goes on reading.
func (c *Conn) CloseWrite() error {
	c.closeNotify()
	c.mu.Lock()
	c.mbits.set(bShutWrite, true)
	c.mu.Unlock()
	return c.post((*flushTask)(c))
}

// outQueue is a connection's queued output, taken from the engine's
// queuePool when a write cannot go out at once (or a write deadline is
// set), and given back once nothing needs it (putQueue). All its fields
// are guarded by the conn's mu.
type outQueue struct {
	n   int      // bytes queued
	out []*chunk // queued output, in order
	vec [][]byte // the send in flight: views of out's chunks
	// writeBy is the write deadline (SetWriteDeadline): Writes after it
	// fail. The queue stays with its conn while it is set.
	writeBy time.Time
	// A WaitOutput in progress: released through drain once the queue
	// holds at most waitAt bytes, or the conn is dead. The release clears
	// waiting; inWait is cleared only by the waiter, once it holds mu
	// again: until then it may still use the queue and receive from drain,
	// so the queue stays with its conn.
	drain   chan struct{}
	waitAt  int
	waiting bool
	inWait  bool
}

// queuePool recycles output queues across an engine's connections, so an
// idle connection holds none (on io_uring every reply made in OnData is
// queued, and each connection that ever replied kept one) and a
// steady-state write takes one without allocating. Any goroutine may use
// it (see freeLists, which also says how it shrinks); it has one class.
type queuePool struct{ freeLists[*outQueue] }

// keptVec bounds the out and vec arrays a pooled queue keeps: a queue
// that grew long lets them go, so that neither the pool nor a connection
// that takes the queue for a short reply holds them.
const keptVec = 64

func (p *queuePool) get() *outQueue {
	if q, ok := p.pop(0); ok {
		return q
	}
	return new(outQueue)
}

// put takes back q, empty and unshared, keeping its arrays (cleared, so
// they hold no chunk or buffer alive) and its drain channel (emptied of
// a wake no waiter took).
func (p *queuePool) put(q *outQueue) {
	clear(q.out[:cap(q.out)])
	clear(q.vec[:cap(q.vec)])
	q.out, q.vec = q.out[:0], q.vec[:0]
	if cap(q.out) > keptVec || cap(q.vec) > keptVec {
		q.out, q.vec = nil, nil
	}
	select {
	case <-q.drain:
	default:
	}
	q.waitAt = 0
	p.push(0, q)
}

// putQueue gives c's queue back to the pool once nothing needs it: all
// of it is sent, no send is in flight (the backend reads vec until the
// send completes), no WaitOutput is inside (inWait), and no write
// deadline is set (the queue holds it). c.mu is held; any goroutine.
func (c *Conn) putQueue() {
	q := c.q
	if q == nil || q.n != 0 || c.mbits.has(bSending) || q.inWait || !q.writeBy.IsZero() {
		return
	}
	c.q = nil
	c.lp.e.queues.put(q)
}

// enqueue copies p to the tail of the output queue. c.mu is held.
func (c *Conn) enqueue(p []byte) {
	c.lp.e.queued.Add(int64(len(p)))
	c.lp.stats.queued.Add(int64(len(p)))
	if c.q == nil {
		c.q = c.lp.e.queues.get()
	}
	q := c.q
	q.n += len(p)
	for len(p) > 0 {
		var ch, last *chunk
		if n := len(q.out); n > 0 {
			last = q.out[n-1]
		}
		if last != nil && last.w < len(last.buf) {
			ch = last
		} else {
			ch = c.lp.e.chunks.get(len(p), nextClass(last))
			q.out = append(q.out, ch)
		}
		k := copy(ch.buf[ch.w:], p)
		ch.w += k
		p = p[k:]
	}
}

// releaseOutput drops the queue. The chunks of a send still in flight do
// not go back to the pool: the backend may go on reading them until the
// send's last completion (io_uring's does), which the closing connection
// will not see, so they are left to the garbage collector; the backend
// keeps them referenced meanwhile. The send covers the first len(q.vec)
// chunks. The queue itself goes back to its pool only without such a
// send (putQueue). c.mu is held.
func (c *Conn) releaseOutput() {
	if c.q == nil {
		return
	}
	c.q.n = 0
	c.wakeWriter()
	kept := 0
	if c.mbits.has(bSending) {
		kept = len(c.q.vec)
	}
	for i, ch := range c.q.out {
		if i >= kept {
			c.lp.e.chunks.put(ch)
		}
		c.q.out[i] = nil
	}
	c.q.out = c.q.out[:0]
	c.putQueue()
}

// flushTask sends c's queue from its loop. It is the Conn itself under
// another type, so posting it allocates nothing and it takes no room.
type flushTask Conn

func (t *flushTask) Run(*loop.Loop) { (*Conn)(t).flush() }

// flush submits a send of the queued output unless one is in flight. It
// runs on c's loop.
func (c *Conn) flush() {
	if c.lbits.has(bClosed) {
		return
	}
	c.mu.Lock()
	c.mbits.set(bFlushPosted, false)
	if c.mbits.has(bSending) || c.outN() == 0 {
		shut := c.mbits.has(bShutWrite) && !c.mbits.has(bSending) && !c.lbits.has(bWrShut)
		c.mu.Unlock()
		if shut {
			c.lbits.set(bWrShut, true)
			c.shutdownWrite()
		}
		c.water()
		return
	}
	q := c.q
	q.vec = q.vec[:0]
	for _, ch := range q.out {
		if len(q.vec) == maxVec {
			break
		}
		q.vec = append(q.vec, ch.buf[ch.r:ch.w])
	}
	c.mbits.set(bSending, true)
	c.mu.Unlock()
	c.lp.l.Send(c.tag, q.vec)
	c.water()
}

// sent handles a send's completion: the bytes written leave the queue,
// and the queue goes back to the pool if they were the last (putQueue).
// The backend holds no view of vec by now (poller.Backend's contract).
func (c *Conn) sent(p loop.Completion) {
	c.mu.Lock()
	clear(c.q.vec)
	c.mbits.set(bSending, false)
	c.consume(p.N())
	c.putQueue()
	c.mu.Unlock()
	c.lp.stats.bytesOut.Add(uint64(p.N()))
	c.touchDone()
	if p.Errno() != 0 {
		c.fail(c.opError("write", p.Errno()))
		return
	}
	if c.lbits.has(bClosing) && c.drained() {
		c.written()
		return
	}
	c.flush()
}

// consume drops n written bytes from the front of the queue. The send
// covered the chunks in order from their r, so the same walk finds its
// bytes even if writers have appended since. A chunk whose bytes are all
// sent goes back to the pool, the tail too once the queue is empty. c.mu
// is held.
func (c *Conn) consume(n int) {
	c.lp.e.queued.Add(-int64(n))
	c.lp.stats.queued.Add(-int64(n))
	q := c.q
	q.n -= n
	i := 0
	for ; i < len(q.out) && n > 0; i++ {
		ch := q.out[i]
		k := min(n, ch.w-ch.r)
		ch.r += k
		n -= k
		if ch.r < ch.w || (ch.w < len(ch.buf) && i == len(q.out)-1) {
			break // partly sent, or the tail still open for writers
		}
		c.lp.e.chunks.put(ch)
		q.out[i] = nil
	}
	if q.n == 0 {
		// All sent: the tail kept open for writers goes back too, so an
		// idle connection holds no chunk (on io_uring every reply made in
		// OnData is queued, and each connection kept 1 KiB so).
		for ; i < len(q.out); i++ {
			c.lp.e.chunks.put(q.out[i])
			q.out[i] = nil
		}
	}
	q.out = q.out[:copy(q.out, q.out[i:])]
	c.wakeWriter()
}

// water applies backpressure: above the high watermark c stops reading;
// at or below the low watermark it reads again. While the engine's output
// is over its budget, c also stops reading if it has output queued or
// produced output for others (bProducing). It runs on c's loop.
func (c *Conn) water() {
	o := &c.lp.e.opts
	c.mu.Lock()
	n := c.outN()
	c.mu.Unlock()
	over, crossed := c.lp.e.overBudget(c.lp)
	if !over {
		c.lbits.set(bProducing, false)
	}
	held := over && (n > 0 || c.lbits.has(bProducing))
	switch {
	case !c.lbits.has(bPaused) && (n > o.WriteHighWater || held):
		c.lbits.set(bPaused, true)
		c.lp.stats.paused.Add(1)
	case c.lbits.has(bPaused) && n <= o.WriteLowWater && !held:
		c.lbits.set(bPaused, false)
		c.lp.stats.paused.Add(-1)
		c.startRead()
	}
	if crossed {
		c.lp.recheck(c)
	}
}

// shutdownWrite shuts down the sending side (shutdown(2), SHUT_WR).
func (c *Conn) shutdownWrite() {
	if err := sock.Shutdown(c.fd.Sysfd(), sock.ShutWrite); err != nil && err != syscall.ENOTCONN {
		c.fail(c.opError("shutdown", err))
	}
}
