package engine

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"

	"github.com/galeio/gale/internal/sock"
)

// Dial connects to addr on network and serves the connection on a loop,
// like an accepted one. OnOpen runs there, maybe before Dial returns: a
// value it needs is given with DialWith (Adoption.Context), not set with
// SetContext once Dial returned.
func (e *Engine) Dial(network, addr string) (*Conn, error) {
	return e.DialContext(context.Background(), network, addr)
}

// DialContext is Dial bounded by ctx: a deadline or cancellation ends the
// attempt. The connect itself uses package net (resolution, happy
// eyeballs, timeouts); the connection then moves to a loop. On Windows a
// TCP connect is gale's own (a socket an IOCP loop's port can take): the
// host's addresses are tried in turn, without Happy Eyeballs.
func (e *Engine) DialContext(ctx context.Context, network, addr string) (*Conn, error) {
	return e.DialWith(ctx, network, addr, Adoption{})
}

// DialWith is DialContext with more said about the connection, in
// AdoptWith's terms: a.Context is its Context from the start, so that
// OnOpen, which may run before DialWith returns, can read it; a.ClientTLS
// makes it a TLS client as DialTLSContext's config does (DialWith then
// returns once the handshake has ended; an empty ServerName is taken from
// addr). a.Input and a.TLS, which say how a connection made elsewhere
// stands, are refused.
func (e *Engine) DialWith(ctx context.Context, network, addr string, a Adoption) (*Conn, error) {
	if len(a.Input) > 0 || a.TLS != nil {
		return nil, errDialAdoption
	}
	if a.ClientTLS != nil {
		return e.dialTLS(ctx, network, addr, clientConfig(a.ClientTLS, addr), a.Context)
	}
	if e.stopping() {
		return nil, ErrEngineStopped
	}
	var setup func(*Conn)
	if a.Context != nil {
		setup = func(c *Conn) { c.ctx = a.Context }
	}
	return e.dial(ctx, network, addr, setup)
}

// dial connects to addr and serves the connection, with setup run on the
// new Conn before it reaches its loop: a socket of gale's own where the
// platform wants one (dialNative), else package net's, adopted.
func (e *Engine) dial(ctx context.Context, network, addr string, setup func(*Conn)) (*Conn, error) {
	if fd, laddr, raddr, ok, err := dialNative(ctx, network, addr); ok {
		if err != nil {
			return nil, err
		}
		return e.adoptFD(fd, laddr, raddr, nil, setup)
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c, err := e.adopt(nc, nil, setup)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// errDialAdoption refuses what DialWith cannot do.
var errDialAdoption = errors.New("engine: DialWith: Adoption's Input and TLS are for connections made elsewhere")

// Adopt moves nc, a connection made elsewhere (accepted by net/http, or
// after a handshake), onto a loop. The engine takes a close-on-exec
// duplicate of its descriptor and closes nc; socket options stay. nc must
// expose its descriptor (syscall.Conn), or Adopt returns an error matching
// errors.ErrUnsupported. OnOpen runs on the loop, maybe before Adopt
// returns: a value it needs is given with AdoptWith (Adoption.Context),
// not set with SetContext once Adopt returned.
func (e *Engine) Adopt(nc net.Conn) (*Conn, error) { return e.AdoptInput(nc, nil) }

// AdoptInput is Adopt for a connection some of whose input was already
// read from nc: by a bufio.Reader, a protocol sniffer, DetachInput or
// netconn. OnData is given input right after OnOpen, even if the peer
// sends nothing more, and then what arrives afterwards, in order; input
// left unconsumed counts against Options.MaxInputBuffer as any other.
// AdoptInput copies input: the caller's slice is free when it returns.
// As with Adopt, OnOpen and OnData may run before it returns: AdoptWith
// takes a value for them.
func (e *Engine) AdoptInput(nc net.Conn, input []byte) (*Conn, error) {
	return e.adopt(nc, input, func(c *Conn) { c.kind |= kCapped })
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
	sock.Release(nc)
	return e.adoptFD(fd, laddr, raddr, input, setup)
}

// adoptFD serves fd, a connected socket the engine owns from now on, as
// adopt does a connection's duplicate.
func (e *Engine) adoptFD(fd int, laddr, raddr net.Addr, input []byte, setup func(*Conn)) (*Conn, error) {
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
