package engine

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// Conn is a connection served by an engine loop.
//
// Every method is safe to call from any goroutine. Callbacks for a Conn
// run on its loop, one at a time; Execute runs a function there too, in
// order with the connection's other tasks.
type Conn struct {
	e       *Engine
	lp      *eloop
	fd      int
	stream  bool
	udp     *udpState // non-nil for a UDP socket
	network string
	laddr   net.Addr
	raddr   net.Addr

	// Loop-owned state.
	tag      poller.Tag
	attached bool
	reading  bool // a receive is in flight
	paused   bool // reading stopped by backpressure
	eof      bool // the peer closed its side
	closing  bool // close once the output queue is empty
	wrShut   bool // the sending side is shut down
	closed   bool
	closeErr error
	inbuf    []byte // received bytes the handler left unconsumed
	index    int    // in lp.conns
	readDL   loop.Timer
	writeDL  loop.Timer
	idle     loop.Timer
	vec      [][]byte
	detached chan int // Detach waits here for the descriptor
	flushT   flushTask
	wakeT    wakeTask

	lastActive atomic.Int64 // unix nanoseconds of the last read or write

	mu          sync.Mutex // guards the fields below
	out         []*chunk   // queued output
	outN        int        // bytes in out
	sending     bool       // a send of out is in flight
	flushPosted bool       // a flush task is queued
	dead        bool       // the descriptor is closing: writes fail
	needPost    bool       // writeLocked queued bytes: post the flush task
	one         [1][]byte  // Write's buffer as a vector, without allocating
	iov         []unix.Iovec
	shutWrite   bool // CloseWrite: shut down once out is empty
	ctx         any
}

func newConn(e *Engine, lp *eloop, fd int, stream bool, network string, laddr, raddr net.Addr) *Conn {
	c := &Conn{e: e, lp: lp, fd: fd, stream: stream, network: network, laddr: laddr, raddr: raddr}
	lp.assigned.Add(1)
	c.flushT.c, c.wakeT.c = c, c
	c.readDL.Fire = c.readDeadline
	c.writeDL.Fire = c.writeDeadline
	c.idle.Fire = c.idleCheck
	return c
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr { return c.laddr }

// RemoteAddr returns the peer's address (nil for a UDP socket: see
// Inbound.From).
func (c *Conn) RemoteAddr() net.Addr { return c.raddr }

// Context returns the value set with SetContext.
func (c *Conn) Context() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctx
}

// SetContext attaches a value of the caller's to c.
func (c *Conn) SetContext(v any) {
	c.mu.Lock()
	c.ctx = v
	c.mu.Unlock()
}

// Wake makes c's loop call OnData with the bytes not yet consumed (maybe
// none).
func (c *Conn) Wake() error { return c.post(&c.wakeT) }

// Execute runs f(c) on c's loop, after the tasks posted for c before it.
// It is not run if c is closed by then.
func (c *Conn) Execute(f func(c *Conn)) error {
	return c.post(loop.Func(func(*loop.Loop) {
		if !c.closed {
			f(c)
		}
	}))
}

// Close closes c once its queued output is written; OnClose then runs
// with a nil error. Closing a closed connection does nothing.
func (c *Conn) Close() error {
	return c.post(loop.Func(func(*loop.Loop) { c.closeGracefully(nil) }))
}

func (c *Conn) post(t loop.Task) error {
	if c.lp.l.Post(t) != nil {
		return ErrEngineStopped
	}
	return nil
}

// wakeTask delivers Wake; one per connection, so posting allocates nothing.
type wakeTask struct{ c *Conn }

func (t *wakeTask) Run(*loop.Loop) {
	if c := t.c; !c.closed && c.attached {
		c.deliver(nil)
	}
}

// touch records activity for the idle timeout.
func (c *Conn) touch() {
	if c.e.opts.IdleTimeout > 0 {
		c.lastActive.Store(c.e.clock.Now().UnixNano())
	}
}
