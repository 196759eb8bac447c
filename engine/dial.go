package engine

import (
	"context"
	"net"
	"syscall"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// Dial connects to addr on network and serves the connection on a loop,
// like an accepted one (OnOpen runs there).
func (e *Engine) Dial(network, addr string) (*Conn, error) {
	return e.DialContext(context.Background(), network, addr)
}

// DialContext is Dial bounded by ctx: a deadline or cancellation ends the
// attempt. The connect itself uses package net (resolution, happy
// eyeballs, timeouts); the connection then moves to a loop.
func (e *Engine) DialContext(ctx context.Context, network, addr string) (*Conn, error) {
	if e.stopping() {
		return nil, ErrEngineStopped
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return e.Adopt(nc)
}

// Adopt moves nc, a connection made elsewhere (accepted by net/http, or
// after a handshake), onto a loop. The engine takes a close-on-exec
// duplicate of its descriptor and closes nc; socket options stay. nc must
// expose its descriptor (syscall.Conn), or Adopt returns an error matching
// errors.ErrUnsupported.
func (e *Engine) Adopt(nc net.Conn) (*Conn, error) {
	if e.stopping() {
		return nil, ErrEngineStopped
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil, errUnsupportedConn
	}
	fd, err := sock.DupConn(sc)
	if err != nil {
		return nil, err
	}
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	nc.Close()
	lp := e.pick(func() net.Addr { return raddr })
	c := newConn(e, lp, fd, sock.IsStream(fd), laddr.Network(), &laddr, raddr)
	if err := e.serve(held{c: c}); err != nil {
		return nil, err
	}
	return c, nil
}

// Detach takes c off its loop once its queued output is written and
// returns the connection as a net.Conn; OnClose runs with ErrDetached.
// Bytes that arrive before the hand-over are given to OnData as usual;
// bytes received but left unconsumed by OnData are lost; bytes not yet
// received stay in the socket for the returned net.Conn.
//
// Detach cancels c's pending receive and waits for it to end: bytes the
// backend took from the socket meanwhile (io_uring receives ahead) reach
// OnData rather than vanishing.
//
// A callback cannot wait for a loop: its own loop would stall, and two
// loops detaching each other's connections would wait for each other for
// ever. From a callback on c's loop, Detach succeeds only when no output
// is queued and no receive is pending (in OnOpen and OnData); from a
// callback on another loop it never does. Otherwise it returns
// ErrDetachBusy and changes nothing: call it from another goroutine.
func (c *Conn) Detach() (net.Conn, error) {
	fds := make(chan int, 1)
	if !c.lp.l.OnLoop() && c.lp.e.onLoop() {
		return nil, ErrDetachBusy // c's loop would have to run while this one waits
	}
	if c.lp.l.OnLoop() {
		c.mu.Lock()
		busy := c.outN > 0 || c.sending || c.reading
		c.mu.Unlock()
		if busy {
			return nil, ErrDetachBusy // nothing started: c goes on as before
		}
		c.detach(fds)
		return c.wrapDetached(<-fds) // with nothing queued it completes at once
	}
	if err := c.post(loop.Func(func(*loop.Loop) { c.detach(fds) })); err != nil {
		return nil, err
	}
	var fd int
	select {
	case fd = <-fds:
	case <-c.lp.l.Done():
		// The loop is gone; if it handed the descriptor over before it
		// went, take it (it would leak in the channel otherwise).
		select {
		case fd = <-fds:
		default:
			return nil, ErrEngineStopped
		}
	}
	return c.wrapDetached(fd)
}

// detach starts the hand-over of c's descriptor to fds. It runs on c's
// loop.
func (c *Conn) detach(fds chan int) {
	if c.closed || c.detached != nil {
		fds <- -1
		return
	}
	c.detached = fds
	c.closeGracefully(ErrDetached)
}

// wrapDetached turns a detached descriptor into a net.Conn (sock.FileConn
// keeps its TCP options).
func (c *Conn) wrapDetached(fd int) (net.Conn, error) {
	if fd < 0 {
		return nil, c.opError("detach", net.ErrClosed)
	}
	nc, err := sock.FileConn(fd)
	if err != nil {
		return nil, c.opError("detach", err)
	}
	return nc, nil
}
