package engine

import (
	"net"
	"sync"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// Detach takes c off its loop once its queued output is written and
// returns the connection as a net.Conn; OnClose runs with ErrDetached.
// No byte is lost or read twice: bytes that arrive before the hand-over
// are given to OnData as usual; bytes not yet received stay in the socket
// for the returned net.Conn; and bytes received but left unconsumed by
// OnData are what the returned net.Conn reads first. In that last case
// it is a wrapper that returns them before the socket's, and no
// syscall.Conn (taking its descriptor would skip them); otherwise it is
// the socket's own *net.TCPConn or *net.UnixConn. DetachInput returns
// the socket and the unconsumed bytes apart.
//
// Detach stops c's receiving and waits for that to end: bytes the
// backend took from the socket meanwhile (io_uring receives ahead of
// OnData, even while backpressure pauses c) reach OnData rather than
// vanishing.
//
// A callback cannot wait for a loop: its own loop would stall, and two
// loops detaching each other's connections would wait for each other for
// ever. From a callback on c's loop, Detach succeeds only when no output
// is queued and nothing is being received for c: in OnOpen, and in OnData
// on epoll and kqueue. On io_uring the kernel goes on receiving for c
// between OnData calls once c first read, which must be stopped first:
// there only OnOpen qualifies (and the OnData that presents AdoptInput's
// input). From a callback on another loop Detach never succeeds.
// Otherwise it returns ErrDetachBusy and changes nothing: call it from
// another goroutine.
func (c *Conn) Detach() (net.Conn, error) {
	nc, input, err := c.DetachInput()
	if err != nil || len(input) == 0 {
		return nc, err
	}
	return &replayConn{Conn: nc, input: input}, nil
}

// DetachInput is Detach with the unconsumed input returned apart: the
// connection as the socket's own net.Conn (a *net.TCPConn or
// *net.UnixConn, a syscall.Conn), and the bytes received but not
// consumed by OnData, in order, which come before anything read from the
// net.Conn. The bytes are the caller's. Called from OnData, DetachInput
// returns what that call's Inbound holds unconsumed, and empties it.
// Engine.AdoptInput, or netconn.FromEngine, takes both back onto a loop.
//
// Its waits, and the callbacks it may be called from (ErrDetachBusy), are
// Detach's. A TLS connection cannot be detached, nor one whose callbacks
// run on Options.Pool (errors.ErrUnsupported).
func (c *Conn) DetachInput() (net.Conn, []byte, error) {
	if c.kind.has(kTLS) {
		// The record layer's state lives in the tls.Conn on the loop;
		// the socket alone would be a stream cut mid-record.
		return nil, nil, errTLSDetach
	}
	if c.poolOf() != nil {
		// Input may wait in the pool's queue, and callbacks run there:
		// the hand-over could not take it all in order.
		return nil, nil, errPoolDetach
	}
	h := &handOver{fd: make(chan int, 1)}
	if !c.lp.l.OnLoop() && c.lp.e.onLoop() {
		return nil, nil, ErrDetachBusy // c's loop would have to run while this one waits
	}
	if c.lp.l.OnLoop() {
		c.mu.Lock()
		busy := c.outN() > 0 || c.mbits.has(bSending) || c.lbits.has(bReading) || c.lbits.has(bReadAhead)
		c.mu.Unlock()
		if busy {
			return nil, nil, ErrDetachBusy // nothing started: c goes on as before
		}
		c.detach(h)
		return c.wrapDetached(h, <-h.fd) // with nothing queued it completes at once
	}
	if err := c.post(loop.Func(func(*loop.Loop) { c.detach(h) })); err != nil {
		return nil, nil, err
	}
	var fd int
	select {
	case fd = <-h.fd:
	case <-c.lp.l.Done():
		// The loop is gone; if it handed the descriptor over before it
		// went, take it (it would leak in the channel otherwise).
		select {
		case fd = <-h.fd:
		default:
			return nil, nil, ErrEngineStopped
		}
	}
	return c.wrapDetached(h, fd)
}

// A handOver carries a detached connection from its loop to the goroutine
// detaching it: finish sets input and then hands the descriptor to fd
// (-1 if c was closed already), so whoever receives from fd may read
// input.
type handOver struct {
	fd    chan int
	input []byte // received and not consumed by OnData
}

// detach starts the hand-over of c to h. It runs on c's loop.
func (c *Conn) detach(h *handOver) {
	if c.lbits.has(bClosed) || c.detachedTo() != nil {
		h.fd <- -1
		return
	}
	c.coldOf().detached = h
	if c.lbits.has(bReadAhead) && !c.lbits.has(bReading) && !c.lbits.has(bClosing) && !c.lbits.has(bEOF) {
		// Not reading (paused by backpressure), but the backend may
		// hold bytes it took ahead: a receive, which closeGracefully
		// cancels at once, brings them to OnData.
		c.lbits.set(bReading, true)
		c.lp.l.Recv(c.tag, nil)
	}
	c.closeGracefully(ErrDetached)
}

// unconsumed returns the input c holds, for a hand-over: during c's
// OnData, a copy of what its Inbound holds (which the loop's read buffer
// may back), and the Inbound is emptied; otherwise what the last OnData
// left, which c gives up. It runs on c's loop.
func (c *Conn) unconsumed() []byte {
	if in := &c.lp.in; in.c == c {
		var b []byte
		if len(in.buf) > 0 {
			b = append(b, in.buf...)
		}
		in.buf = nil
		return b
	}
	return c.in.bytes() // (c gives it up: finish drops c.in)
}

// wrapDetached turns a detached descriptor into a net.Conn (sock.FileConn
// keeps its TCP options), returned with h's input.
func (c *Conn) wrapDetached(h *handOver, fd int) (net.Conn, []byte, error) {
	if fd < 0 {
		return nil, nil, c.opError("detach", net.ErrClosed)
	}
	nc, err := sock.FileConn(fd)
	if err != nil {
		return nil, nil, c.opError("detach", err)
	}
	return nc, h.input, nil
}

// replayConn is a detached connection whose first bytes were received by
// the engine: Read returns them before reading the socket.
type replayConn struct {
	net.Conn
	mu    sync.Mutex // guards input; Reads may be concurrent
	input []byte
}

func (r *replayConn) Read(p []byte) (int, error) {
	r.mu.Lock()
	if len(r.input) > 0 {
		n := copy(p, r.input)
		r.input = r.input[n:]
		r.mu.Unlock()
		return n, nil
	}
	r.mu.Unlock()
	return r.Conn.Read(p)
}

// Close drops the bytes not yet read, so that Read fails as after the
// socket's own Close.
func (r *replayConn) Close() error {
	r.mu.Lock()
	r.input = nil
	r.mu.Unlock()
	return r.Conn.Close()
}
