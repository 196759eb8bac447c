package engine

import (
	"bytes"
	"context"
	"net"
	"net/netip"
	"syscall"

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
func (e *Engine) Adopt(nc net.Conn) (*Conn, error) { return e.AdoptInput(nc, nil) }

// AdoptInput is Adopt for a connection some of whose input was already
// read from nc: by a bufio.Reader, a protocol sniffer, DetachInput or
// netconn. OnData is given input right after OnOpen, even if the peer
// sends nothing more, and then what arrives afterwards, in order; input
// left unconsumed counts against Options.MaxInputBuffer as any other.
// AdoptInput copies input: the caller's slice is free when it returns.
func (e *Engine) AdoptInput(nc net.Conn, input []byte) (*Conn, error) {
	return e.adopt(nc, input, nil)
}

// adopt is AdoptInput with setup, if not nil, run on the new Conn before
// it reaches its loop.
func (e *Engine) adopt(nc net.Conn, input []byte, setup func(*Conn)) (*Conn, error) {
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
	network := laddr.Network()
	// A TCP peer is kept in compact form, and the local address is asked
	// of the socket when wanted, as for an accepted connection: nc's
	// *net.TCPAddr values would cost an idle connection some 250 bytes.
	var peer netip.AddrPort
	lap := &laddr
	if ta, ok := raddr.(*net.TCPAddr); ok && isTCP(network) {
		peer, raddr, lap = ta.AddrPort(), nil, nil
	}
	c := newConn(e, lp, fd, sock.IsStream(fd), network, lap, raddr)
	c.setPeer(peer)
	if len(input) > 0 {
		c.in = &inbuf{b: bytes.Clone(input)} // attach delivers it
	}
	if setup != nil {
		setup(c)
	}
	if err := e.serve(held{c: c}); err != nil {
		return nil, err
	}
	return c, nil
}
