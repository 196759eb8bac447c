package engine

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/galeio/gale/internal/connslot"
	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// Conn is a connection served by an engine loop.
//
// Every method is safe to call from any goroutine. Callbacks for a Conn
// run on its loop, one at a time; Execute runs a function there too, in
// order with the connection's other tasks.
type Conn struct {
	lp *eloop
	// fd is the socket. The loop owns it and closes it (or hands it to
	// Detach) in finish; Write, WriteTo and LocalAddr use it from other
	// goroutines between Acquire and Release, so the close waits for them
	// and none reaches a number that another file took since.
	fd sock.FD
	// laddr points at the local address, shared with the listener that
	// accepted c. It is nil for a conn accepted on a wildcard address until
	// the socket is asked: on the first LocalAddr, or before the
	// descriptor closes.
	laddr atomic.Pointer[net.Addr]
	// cold holds what few connections need (see connCold): so an idle
	// Conn is 112 bytes (TestConnSize).
	cold atomic.Pointer[connCold]

	// Loop-owned state.
	tag    loop.Tag
	in     *inbuf // received bytes the handler left unconsumed (inbuf.go)
	timers *connTimers
	peer   peerAddr // a TCP peer (else in cold.raddr); set before c is shared

	lbits loopBits // the loop's flags (bReading...)
	kind  kindBits // c's network and what c is; set before c is shared
	mbits muBits   // flags guarded by mu (bSending...)

	mu  sync.Mutex // guards mbits and the fields below
	q   *outQueue  // queued output; nil until output is first queued
	ctx any        // the user's value; or, once connslot.Set ran, the slot (bSlot) or a *slotted
}

// slotted is a Conn's ctx once a protocol layer set its slot
// (internal/connslot) and the user a value: the user's value beside the
// layer's, so that SetContext cannot overwrite the layer's. It lives in
// ctx, not in a field of its own, to keep a Conn in its size class
// (TestConnSize). Until the user sets a value, which few do on a
// connection a layer took over (websocket keeps its own), ctx holds the
// slot itself, and bSlot says so: the 32 bytes of a slotted stay
// unmade for every such connection (TestSlotAllocs).
type slotted struct{ user, slot any }

func init() {
	connslot.Get = func(c any) any { return c.(*Conn).slot() }
	connslot.Set = func(c, v any) { c.(*Conn).setSlot(v) }
}

func (c *Conn) slot() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mbits.has(bSlot) {
		return c.ctx
	}
	if s, ok := c.ctx.(*slotted); ok {
		return s.slot
	}
	return c.ctx
}

// setSlot sets c's slot to v. The first call hands the Context to the
// user, nil until SetContext.
func (c *Conn) setSlot(v any) {
	c.mu.Lock()
	if s, ok := c.ctx.(*slotted); ok && !c.mbits.has(bSlot) {
		s.slot = v
	} else {
		c.ctx = v
		c.mbits.set(bSlot, true)
	}
	c.mu.Unlock()
}

// kindBits hold what a Conn is, fixed before it is shared, so any
// goroutine may read them: its netKind in the low four bits and the flags
// below. A byte of their own keeps them apart from the flags that change.
type kindBits uint8

const (
	kNet    kindBits = 0x0f // the netKind
	kStream kindBits = 1 << (iota + 3)
	kUDP             // cold.udp is set
	kTLS             // cold.tls is set
	kCapped          // accepted or adopted: Options.MaxConns and MaxConnsPerIP apply
)

func (k kindBits) has(f kindBits) bool { return k&f != 0 }

// net returns the netKind in k.
func (k kindBits) net() netKind { return netKind(k & kNet) }

// loopBits are flags of a Conn that its loop owns, a bit each: with
// kindBits and muBits they keep an idle Conn at 112 bytes (TestConnSize).
type loopBits uint16

const (
	bReading loopBits = 1 << iota // a receive is in flight
	bPaused                       // reading stopped by backpressure
	bHeld                         // reading stopped by PauseRead
	bEOF                          // the peer closed its side
	bClosing                      // close once the output queue is empty
	bClosed
	bAttached
	// bReadAhead: the backend may take c's bytes from the socket while no
	// receive of c's is in flight (io_uring's multishot receive goes on
	// between OnData calls), so a hand-over must stop it and collect them
	// (Detach).
	bReadAhead
	// bProducing: while the engine's output was over budget, a callback
	// of c's queued output on another conn: c is not read until the
	// output is back under budget (see Engine.charge).
	bProducing
	bWrShut // the sending side is shut down
	bReset  // close with a reset (Abort)
	// bLinger: closing, c's output is written and its sending side shut
	// down; it drops what it reads until its peer's end or the linger's
	// bound (see written).
	bLinger
	bPerIP  // counted in its peer's connections (Options.MaxConnsPerIP)
	bQueued // reading stopped: PoolOptions.MaxQueued bytes wait for the pool
)

func (b loopBits) has(f loopBits) bool { return b&f != 0 }

func (b *loopBits) set(f loopBits, on bool) {
	if on {
		*b |= f
	} else {
		*b &^= f
	}
}

// muBits are flags of a Conn guarded by its mu, a bit each.
type muBits uint8

const (
	bSending     muBits = 1 << iota // a send of the queue's output is in flight
	bFlushPosted                    // a flush task is queued
	bDead                           // closing or closed: writes fail
	bShutWrite                      // CloseWrite: shut down once the queue is empty
	bBatching                       // OnData runs on a batching loop: see eloop.batch
	bAlert                          // closeNotify writes: writeRaw counts tlsState.alert
	bSlot                           // ctx is the slot (see slotted); the user's value is nil
)

func (b muBits) has(f muBits) bool { return b&f != 0 }

func (b *muBits) set(f muBits, on bool) {
	if on {
		*b |= f
	} else {
		*b &^= f
	}
}

// newConn makes a Conn holding only what every connection needs: timers
// and the output queue are made the first time they are used, and an
// accepted connection's addresses are kept in compact form (see
// listener.accepted), so an idle connection costs little memory.
func newConn(e *Engine, lp *eloop, fd int, stream bool, network string, laddr *net.Addr, raddr net.Addr) *Conn {
	c := &Conn{lp: lp}
	if stream {
		c.kind = kStream
	}
	c.setNetwork(network)
	if raddr != nil {
		c.coldOf().raddr = raddr
	}
	c.laddr.Store(laddr)
	c.fd.Init(fd)
	lp.assigned.Add(1)
	if p := e.opts.Pool; p != nil && !strings.HasPrefix(network, "udp") {
		c.coldOf().pool = &pooled{c: c, wp: p.wp}
	}
	if e.opts.idling() {
		c.timers = newConnTimers(c) // touch reads it from any goroutine: set it now
	}
	return c
}

// LocalAddr returns the local address. It stays valid after the
// connection closed.
func (c *Conn) LocalAddr() net.Addr {
	if a := c.laddr.Load(); a != nil {
		return *a
	}
	fd, ok := c.fd.Acquire()
	if !ok {
		// Closed: finish asked the socket before closing it.
		if a := c.laddr.Load(); a != nil {
			return *a
		}
		return nil
	}
	defer c.fd.Release()
	return c.askLocal(fd)
}

// askLocal asks the socket fd for c's local address and keeps it. A
// connection has a local address of its own only on a wildcard TCP
// listener (see listener.accepted).
func (c *Conn) askLocal(fd int) net.Addr {
	sa, err := sock.Getsockname(fd)
	if err != nil {
		return nil
	}
	a := sock.Addr(c.network(), sa)
	if a == nil {
		return nil
	}
	c.laddr.CompareAndSwap(nil, &a)
	return *c.laddr.Load()
}

// RemoteAddr returns the peer's address (nil for a UDP socket: see
// Inbound.From).
func (c *Conn) RemoteAddr() net.Addr {
	if k := c.cold.Load(); k != nil && k.raddr != nil {
		return k.raddr
	}
	if c.peer.fam == 0 {
		return nil
	}
	return net.TCPAddrFromAddrPort(c.peer.addrPort())
}

// Context returns the value set with SetContext, or given with
// Adoption.Context.
func (c *Conn) Context() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mbits.has(bSlot) {
		return nil
	}
	if s, ok := c.ctx.(*slotted); ok {
		return s.user
	}
	return c.ctx
}

// SetContext attaches a value of the caller's to c. It may be called from
// any goroutine, but c's callbacks may have run before: a connection that
// Dial or Adopt returns is on its loop already, and its OnOpen may have
// run. A value the callbacks need from the start is given before the
// connection is live, as Adoption.Context (AdoptWith, DialWith, netconn's
// ToEngineWith), or set in OnOpen.
func (c *Conn) SetContext(v any) {
	c.mu.Lock()
	switch s, ok := c.ctx.(*slotted); {
	case c.mbits.has(bSlot):
		if v != nil {
			c.ctx = &slotted{user: v, slot: c.ctx}
			c.mbits.set(bSlot, false)
		}
	case ok:
		s.user = v
	default:
		c.ctx = v
	}
	c.mu.Unlock()
}

// Wake makes c's loop call OnData with the bytes not yet consumed (maybe
// none).
func (c *Conn) Wake() error { return c.post((*wakeTask)(c)) }

// Execute runs f(c) on c's loop, after the tasks posted for c before it.
// It is not run if c is closed by then.
func (c *Conn) Execute(f func(c *Conn)) error {
	return c.post(loop.Func(func(*loop.Loop) {
		if !c.lbits.has(bClosed) {
			prev := c.lp.enter(c)
			act := c.callFunc(f)
			c.lp.leave(c, prev)
			c.act(act)
		}
	}))
}

// Close closes c gracefully, so that its peer gets everything queued:
// c's queued output is written, then (on a TCP or Unix stream) its
// sending side is shut down, so the peer reads the end of the stream, and
// c lingers until the peer's end, reading and dropping what the peer
// still sends, for at most Options.CloseLinger (500 ms) and 256 KiB; only
// then is the descriptor closed. (Closed with input unread, a socket is
// reset instead, and the reset discards output still in flight.) A
// connection whose peer has taken all it wrote, with nothing unread,
// closes at once. OnClose then runs with a nil error. From Close on, the
// handler gets no more input, and Write fails. Closing a closed
// connection does nothing. A peer that stops reading holds a closing
// connection until an idle timeout, a write deadline with
// Options.CloseOnDeadline (a Close action from OnDeadline does not end a
// close under way), or Shutdown's context ends it; Abort does not wait.
func (c *Conn) Close() error {
	return c.post(loop.Func(func(*loop.Loop) { c.closeGracefully(nil) }))
}

// Abort closes c at once, dropping its queued output; OnClose then runs
// with a nil error, and Writes fail from the moment Abort is called. The
// connection is reset, so the peer cannot take the stream cut short for a
// whole one. Aborting a closed connection does nothing.
func (c *Conn) Abort() error {
	c.mu.Lock()
	c.mbits.set(bDead, true)
	c.mu.Unlock()
	return c.post(loop.Func(func(*loop.Loop) {
		if !c.lbits.has(bClosed) {
			c.lbits.set(bReset, true)
			c.fail(nil)
		}
	}))
}

func (c *Conn) post(t loop.Task) error {
	if q := c.earlyOf(); q != nil {
		if done, err := q.hold(t); done {
			return err
		}
	}
	if c.lp.l.Post(t) != nil {
		return ErrEngineStopped
	}
	return nil
}

// wakeTask delivers Wake. It is the Conn itself under another type, so
// posting it allocates nothing and it takes no room.
type wakeTask Conn

func (t *wakeTask) Run(*loop.Loop) {
	if c := (*Conn)(t); !c.lbits.has(bClosed) && c.lbits.has(bAttached) {
		c.deliver(nil)
	}
}

// touch records activity for the idle timeout.
func (c *Conn) touch() {
	if c.lp.e.opts.idling() {
		c.timers.lastActive.Store(c.lp.e.clock.Now().UnixNano())
	}
}

// touchDone records the activity of a completion, stamped with the time
// the loop woke for it: the bytes moved before the loop saw them. Loop
// goroutine only.
func (c *Conn) touchDone() {
	if c.lp.e.opts.idling() {
		c.timers.lastActive.Store(c.lp.l.Now().UnixNano())
	}
}

// Engine returns the engine serving c.
func (c *Conn) Engine() *Engine { return c.lp.e }
