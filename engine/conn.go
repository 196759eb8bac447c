package engine

import (
	"net"
	"net/netip"
	"sync"

	"github.com/galeio/gale/internal/loop"
	"golang.org/x/sys/unix"
)

// Conn is a connection served by an engine loop.
//
// Every method is safe to call from any goroutine. Callbacks for a Conn
// run on its loop, one at a time; Execute runs a function there too, in
// order with the connection's other tasks.
type Conn struct {
	lp      *eloop
	fd      int
	udp     *udpState // non-nil for a UDP socket
	network string
	laddr   net.Addr // nil for an accepted conn on a wildcard address: see LocalAddr
	raddr   net.Addr // nil for an accepted TCP conn: see peer
	peer    netip.AddrPort

	// Loop-owned state.
	tag      loop.Tag
	stream   bool
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
	timers   *connTimers
	detached chan int // Detach waits here for the descriptor

	mu          sync.Mutex // guards the fields below
	q           *outQueue  // queued output; nil until output is first queued
	outN        int        // bytes in q
	sending     bool       // a send of out is in flight
	flushPosted bool       // a flush task is queued
	dead        bool       // closing or closed: writes fail
	shutWrite   bool       // CloseWrite: shut down once out is empty
	batching    bool       // OnData runs on a ring loop: see eloop.ring
	ctx         any
}

// newConn makes a Conn holding only what every connection needs: timers
// and the output queue are made the first time they are used, and an
// accepted connection's addresses are kept in compact form (see
// listener.accepted), so an idle connection costs little memory.
func newConn(e *Engine, lp *eloop, fd int, stream bool, network string, laddr, raddr net.Addr) *Conn {
	c := &Conn{lp: lp, fd: fd, stream: stream, network: network, laddr: laddr, raddr: raddr}
	lp.assigned.Add(1)
	if e.opts.IdleTimeout > 0 {
		c.timers = newConnTimers(c) // touch reads it from any goroutine: set it now
	}
	return c
}

// LocalAddr returns the local address.
func (c *Conn) LocalAddr() net.Addr {
	if c.laddr != nil {
		return c.laddr
	}
	if sa, err := unix.Getsockname(c.fd); err == nil {
		return sockaddrAddr(c.network, sa)
	}
	return nil
}

// RemoteAddr returns the peer's address (nil for a UDP socket: see
// Inbound.From).
func (c *Conn) RemoteAddr() net.Addr {
	if c.raddr != nil || !c.peer.IsValid() {
		return c.raddr
	}
	return net.TCPAddrFromAddrPort(c.peer)
}

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
func (c *Conn) Wake() error { return c.post((*wakeTask)(c)) }

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

// wakeTask delivers Wake. It is the Conn itself under another type, so
// posting it allocates nothing and it takes no room.
type wakeTask Conn

func (t *wakeTask) Run(*loop.Loop) {
	if c := (*Conn)(t); !c.closed && c.attached {
		c.deliver(nil)
	}
}

// touch records activity for the idle timeout.
func (c *Conn) touch() {
	if c.lp.e.opts.IdleTimeout > 0 {
		c.timers.lastActive.Store(c.lp.e.clock.Now().UnixNano())
	}
}

// touchDone records the activity of a completion, stamped with the time
// the loop woke for it: the bytes moved before the loop saw them. Loop
// goroutine only.
func (c *Conn) touchDone() {
	if c.lp.e.opts.IdleTimeout > 0 {
		c.timers.lastActive.Store(c.lp.l.Now().UnixNano())
	}
}
