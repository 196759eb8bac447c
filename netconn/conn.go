package netconn

import (
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// Conn is a stream connection (TCP or Unix) served by one of gale's
// loops: a net.Conn and a syscall.Conn, with the methods of *net.TCPConn.
//
// Every method is safe from any goroutine, as net.Conn promises: Reads are
// served one at a time, and so are Writes, while a Read, a Write, Close
// and the deadline setters may run concurrently.
//
// Buffers: Read's slice is written only until Read returns; Write's
// slice is read only until Write returns. A Read that finds nothing parks
// its goroutine; the loop receives into its own buffer and copies into the
// parked Read's slice. A Write writes at once what the socket takes and
// has the loop send the rest, returning once every byte is sent or an
// error (a deadline, Close, a reset) stopped it: never a short count with
// a nil error.
type Conn struct {
	fd      sock.FD
	g       *group
	lp      *nloop
	network string
	laddr   atomic.Pointer[net.Addr]
	raddr   net.Addr

	rd reader
	wr writer

	closed atomic.Bool
	// gone is closed once the loop let go of the descriptor.
	gone chan struct{}

	// Owned by the loop goroutine.
	tag      loop.Tag
	index    int32 // position in lp.conns
	attached bool  // tag is valid
	closing  bool  // Close in progress
	ended    bool  // the loop let go of c
	dead     bool  // attach failed or the loop failed
}

// newConn wraps fd, a connected non-blocking stream socket, for loop lp of
// g; buffered are bytes already received from it, which Read returns
// first. g counts the conn as a user from here on.
func newConn(g *group, fd int, network string, laddr, raddr net.Addr, buffered []byte) *Conn {
	c := &Conn{g: g, lp: g.pick(), network: network, raddr: raddr, gone: make(chan struct{})}
	c.fd.Init(fd)
	if laddr != nil {
		c.laddr.Store(&laddr)
	}
	c.rd.init(c, buffered)
	c.wr.init(c)
	return c
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr {
	if a := c.laddr.Load(); a != nil {
		return *a
	}
	fd, ok := c.fd.Acquire()
	if !ok {
		return nil
	}
	sa, err := sock.Getsockname(fd)
	c.fd.Release()
	if err != nil {
		return nil
	}
	a := sock.Addr(c.network, sa)
	c.laddr.Store(&a)
	return a
}

// RemoteAddr returns the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// Close closes the connection: a Read or Write blocked in another
// goroutine returns net.ErrClosed, and so does every later call. Close
// returns once the descriptor is closed; a second Close fails with
// net.ErrClosed.
func (c *Conn) Close() error {
	if !c.closed.CompareAndSwap(false, true) {
		return c.opError("close", net.ErrClosed)
	}
	c.rd.wake(0, c.opError("read", net.ErrClosed), true)
	c.finish()
	return nil
}

// finish has the loop end c: cancel what it has in flight, release the
// descriptor's slot and close the descriptor. It waits for the loop, then
// lets go of the group.
func (c *Conn) finish() {
	if c.lp.l.Post((*finishTask)(c)) != nil {
		c.fd.Close() // the loop is gone: nothing of c's is in flight
		close(c.gone)
	}
	<-c.gone
	c.wr.wake(c.opError("write", net.ErrClosed))
	c.rd.dropStash()
	c.g.release()
}

// finishTask is c's Close on its loop.
type finishTask Conn

func (t *finishTask) Run(l *loop.Loop) {
	c := (*Conn)(t)
	c.closing = true
	if c.attached {
		if c.rd.armed {
			l.Cancel(c.tag, loop.OpRecv)
		}
		if c.wr.sending {
			l.Cancel(c.tag, loop.OpSend)
		}
	}
	c.settle(l)
}

// settle completes a close or hand-over once nothing is in flight. Loop
// goroutine only.
func (c *Conn) settle(l *loop.Loop) {
	if !c.closing || c.rd.armed || c.wr.sending {
		return
	}
	if c.attached {
		l.Release(c.tag)
		c.lp.conns.Remove(c)
		c.attached = false
	}
	// A timer left in the heap would keep c until its deadline.
	l.Unschedule(&c.rd.timer)
	l.Unschedule(&c.wr.timer)
	c.rd.timerAt.Store(0)
	c.fd.Close()
	c.closing, c.ended = false, true
	close(c.gone)
}

// attach adds c to its loop. Loop goroutine only.
func (c *Conn) attach(l *loop.Loop) bool {
	if c.attached {
		return true
	}
	if c.dead || c.closing || c.ended {
		return false
	}
	tag, err := l.Attach(c.fd.Sysfd(), true, (*connOwner)(c))
	if err != nil {
		c.fail(l, err)
		return false
	}
	c.tag, c.attached = tag, true
	c.lp.conns.Add(c)
	return true
}

// fail ends c's operations with err: the loop failed, or c could not join
// it. Loop goroutine only.
func (c *Conn) fail(l *loop.Loop, err error) {
	c.dead = true
	if c.attached {
		l.Release(c.tag)
		c.lp.conns.Remove(c)
		c.attached = false
	}
	c.rd.armed = false
	if c.rd.hold != nil {
		close(c.rd.hold)
		c.rd.hold = nil
	}
	c.rd.failed(c.opError("read", err))
	if c.wr.sending {
		c.wr.sending = false
		c.wr.complete(0, c.opError("write", err))
	}
	c.settle(l)
}

// connOwner is the loop's Owner for a Conn: the Conn itself under another
// type, so that Complete stays out of Conn's methods.
type connOwner Conn

// Complete receives the loop's completions for c.
func (o *connOwner) Complete(l *loop.Loop, cp loop.Completion) {
	c := (*Conn)(o)
	c.lp.woke = true
	switch cp.Op() {
	case loop.OpRecv:
		c.rd.completed(l, cp)
	case loop.OpSend:
		c.wr.completed(l, cp)
	}
	c.settle(l)
}

// post hands t to c's loop.
func (c *Conn) post(t loop.Task) error {
	if err := c.lp.l.Post(t); err != nil {
		return net.ErrClosed
	}
	return nil
}

// opError wraps err as package net does for op on c.
func (c *Conn) opError(op string, err error) error {
	return sock.OpError(op, c.network, c.localForError(), c.raddr, err)
}

func (c *Conn) localForError() net.Addr {
	if a := c.laddr.Load(); a != nil {
		return *a
	}
	return nil
}

// SetDeadline sets the read and write deadlines.
func (c *Conn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the time after which Read fails with an error
// matching os.ErrDeadlineExceeded (a timeout net.Error); a zero t means
// none. It applies to a Read already blocked.
func (c *Conn) SetReadDeadline(t time.Time) error {
	if c.closed.Load() {
		return c.opError("set", net.ErrClosed)
	}
	c.rd.setDeadline(t)
	return nil
}

// SetWriteDeadline sets the time after which Write fails with an error
// matching os.ErrDeadlineExceeded, having written what it could; a zero t
// means none. It applies to a Write already blocked.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	if c.closed.Load() {
		return c.opError("set", net.ErrClosed)
	}
	c.wr.setDeadline(t)
	return nil
}

// nanos turns a deadline into the form the halves store: 0 for none.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	if n := t.UnixNano(); n > 0 {
		return n
	}
	return 1 // long past, but not "none"
}

// passed reports whether deadline d (nanos; 0 none) has passed.
func passed(d int64) bool { return d != 0 && time.Now().UnixNano() >= d }

var errTimeout = os.ErrDeadlineExceeded
