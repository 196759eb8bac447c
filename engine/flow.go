package engine

import (
	"crypto/tls"
	"errors"
	"net"

	"github.com/galeio/gale/internal/loop"
)

// Flow control for a protocol layered on a Conn whose handler hands work
// to other goroutines (an HTTP server streaming a request body to its
// handler, a response written by a goroutine to a slow reader).

// PauseRead stops reading from c until ResumeRead: no receive is
// submitted, so the kernel's socket buffer fills and TCP slows the peer.
// It is independent of the engine's own backpressure (watermarks,
// OutputBudget): c reads again only when neither holds it. It is posted
// to c's loop, from a callback as from any other goroutine, and takes
// effect when the loop runs its tasks: a receive already submitted by
// then still completes, and its bytes reach OnData (on epoll the loop
// may read the socket's whole backlog before it runs its tasks). From
// OnData, Inbound.PauseRead takes effect at once. It costs no
// allocation, and fails only once the engine has stopped.
func (c *Conn) PauseRead() error { return c.post((*pauseTask)(c)) }

// ResumeRead undoes PauseRead, posted the same way (Inbound.ResumeRead
// is the immediate one). The receive it restarts is submitted after the
// tasks posted before the resume ran, so that a PauseRead posted
// meanwhile (by a callback that ran before it) holds. It does not call
// OnData for bytes already held: Wake does.
func (c *Conn) ResumeRead() error { return c.post((*resumeTask)(c)) }

func (c *Conn) resumeRead() {
	if c.lbits.has(bHeld) {
		c.lbits.set(bHeld, false)
		c.startRead()
	}
}

// pauseTask, resumeTask and readTask are the Conn under other types, so
// posting them allocates nothing.
type (
	pauseTask  Conn
	resumeTask Conn
	readTask   Conn
)

func (t *pauseTask) Run(*loop.Loop) { (*Conn)(t).lbits.set(bHeld, true) }

// Run lifts the pause, and posts the receive's start behind the tasks
// queued now: a PauseRead among them comes first, and holds.
func (t *resumeTask) Run(*loop.Loop) {
	c := (*Conn)(t)
	if c.lbits.has(bHeld) {
		c.lbits.set(bHeld, false)
		c.post((*readTask)(c))
	}
}

func (t *readTask) Run(*loop.Loop) { (*Conn)(t).startRead() }

// errWaitCanceled is WaitOutput's answer when its done channel closed.
var errWaitCanceled = errors.New("engine: wait for output canceled")

// WaitOutput blocks until at most n bytes of c's output are queued and
// unsent, and returns nil; a writer that calls it after each Write keeps
// its backlog under n, as a blocking net.Conn's Write would. It returns
// early with an error when c closes with more than n bytes queued
// (wrapping net.ErrClosed) or when done, if not nil, is closed. A write
// deadline that passes closes the wait only if OnDeadline closes c. A
// negative n counts as 0.
//
// One goroutine at a time may wait on a Conn. It must not be c's loop,
// whose sends are what the wait is for: called there, WaitOutput fails at
// once.
func (c *Conn) WaitOutput(n int, done <-chan struct{}) error {
	if c.lp.l.OnLoop() {
		return c.opError("wait", errWaitOnLoop)
	}
	n = max(n, 0) // an empty queue (c.q nil) meets every wait
	c.mu.Lock()
	for c.outN() > n {
		if c.mbits.has(bDead) {
			c.mu.Unlock()
			return c.opError("write", net.ErrClosed)
		}
		q := c.q // stays c's until inWait is cleared (putQueue)
		if q.drain == nil {
			q.drain = make(chan struct{}, 1)
		}
		q.waitAt, q.waiting, q.inWait = n, true, true
		c.mu.Unlock()
		canceled := c.waitDrain(q.drain, done)
		c.mu.Lock()
		q.waiting, q.inWait = false, false
		if canceled {
			c.putQueue()
			c.mu.Unlock()
			return errWaitCanceled
		}
	}
	c.putQueue() // the sends it waited for may have emptied the queue
	c.mu.Unlock()
	return nil
}

// waitDrain waits for drain or done, and reports whether done came
// first. Called from one of c's pooled callbacks, it gives the worker up
// meanwhile (workpool.Pool.Block): a peer that does not read holds the
// callback, not a share of the pool.
func (c *Conn) waitDrain(drain <-chan struct{}, done <-chan struct{}) bool {
	if pc := c.poolOf(); pc != nil && pc.inCall.Load() {
		pc.wp.Block()
		defer pc.wp.Unblock()
	}
	select {
	case <-drain:
		return false
	case <-done:
		return true
	}
}

// errWaitOnLoop refuses WaitOutput on the loop that must do the sending.
var errWaitOnLoop = errors.New("engine: WaitOutput called on the connection's own loop")

// wakeWriter releases a WaitOutput whose bound the queue is now within,
// or every waiter once c is dead. c.mu is held.
func (c *Conn) wakeWriter() {
	q := c.q
	if q == nil || !q.waiting || (c.outN() > q.waitAt && !c.mbits.has(bDead)) {
		return
	}
	q.waiting = false
	select {
	case q.drain <- struct{}{}:
	default:
	}
}

// Adoption says how AdoptWith takes a connection over.
type Adoption struct {
	// Input is what was read from the connection before: OnData is given
	// it first, as with AdoptInput. It is copied.
	Input []byte
	// TLS, if not nil, makes the connection the server side of a TLS
	// connection that has not begun its handshake: the engine handshakes
	// with this config as for ListenTLS (within Options.HandshakeWorkers
	// and Options.HandshakeTimeout), before OnOpen.
	TLS *tls.Config
	// ClientTLS, if not nil, makes the connection the client side of a TLS
	// connection that has not begun its handshake, as DialTLS's (an empty
	// ServerName is taken from the connection's remote address; set it to
	// the host name dialed). The handshake runs as DialTLS's does; a
	// failed one closes the connection, with OnClose and no OnOpen.
	ClientTLS *tls.Config
	// Context is the connection's Context from the start, so that OnOpen
	// can read it (SetContext once AdoptWith returned may come after
	// OnOpen and OnData).
	Context any
	// Proxy, if not nil, reads a PROXY protocol header at the start of
	// the connection, before its TLS handshake and OnOpen, if it comes
	// from a balancer Proxy trusts (see ProxyProtocol), as a
	// ListenConfig.Proxy listener's connections do (Input and ClientTLS
	// must then be unset). Until OnOpen, RemoteAddr is the socket's peer.
	Proxy *ProxyProtocol
}

// AdoptWith is AdoptInput with more said about the connection: see
// Adoption. DialWith takes an Adoption too.
func (e *Engine) AdoptWith(nc net.Conn, a Adoption) (*Conn, error) {
	switch {
	case (a.TLS != nil || a.ClientTLS != nil) && len(a.Input) > 0:
		return nil, errors.New("engine: AdoptWith: TLS with input already read")
	case a.TLS != nil && a.ClientTLS != nil:
		return nil, errors.New("engine: AdoptWith: TLS and ClientTLS both set")
	case a.Proxy != nil && (a.ClientTLS != nil || len(a.Input) > 0):
		return nil, errors.New("engine: AdoptWith: Proxy is for a server's connection with nothing read")
	}
	var client *tls.Config
	if a.ClientTLS != nil {
		client = clientConfig(a.ClientTLS, nc.RemoteAddr().String())
	}
	return e.adopt(nc, a.Input, func(c *Conn) {
		c.ctx = a.Context
		c.kind |= kCapped
		c.awaitProxy(a.Proxy)
		switch {
		case a.TLS != nil:
			c.setTLS(newTLSState(c, a.TLS, false))
		case client != nil:
			c.setTLS(newTLSState(c, client, true))
		}
	})
}

// PauseRead is Conn.PauseRead for the connection whose OnData this is,
// taking effect at once: no receive follows this OnData until a
// ResumeRead.
func (in *Inbound) PauseRead() {
	switch {
	case in.c != nil:
		in.c.lbits.set(bHeld, true)
	case in.pc != nil:
		in.pc.c.PauseRead() // a pooled OnData: posted
	}
}

// ResumeRead is Conn.ResumeRead for the connection whose OnData this is,
// taking effect at once.
func (in *Inbound) ResumeRead() {
	switch {
	case in.c != nil:
		in.c.resumeRead()
	case in.pc != nil:
		in.pc.c.ResumeRead()
	}
}
