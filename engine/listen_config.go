package engine

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/sock"
)

// ListenConfig says how a listener serves: what each connection begins
// with (a PROXY header, a TLS handshake) and the socket's options. The
// zero value is Listen's listener.
type ListenConfig struct {
	// TLS, if not nil, makes it ListenTLS's: see there.
	TLS *tls.Config
	// Proxy, if not nil, reads a PROXY protocol header at the start of
	// the connections from the balancers it trusts, before the TLS
	// handshake and OnOpen (see ProxyProtocol).
	Proxy *ProxyProtocol

	// The options below apply to a socket ListenWith opens, not to one
	// ServeListener is given (set those where it is made). An option
	// the system lacks makes ListenWith fail with an error matching
	// errors.ErrUnsupported.

	// Backlog is the length of the queue of connections the kernel has
	// accepted and the loop has not yet taken (listen(2)). Default the
	// system's maximum (somaxconn), as package net does.
	Backlog int
	// ReusePort sets SO_REUSEPORT, so that other sockets, of this
	// process or another, can listen on the same address and share its
	// connections: a new process can begin serving before the old one
	// stops. (Options.ReusePort sets it too, for a socket per loop.)
	ReusePort bool
	// RecvBuffer and SendBuffer set SO_RCVBUF and SO_SNDBUF, which
	// accepted connections inherit. 0 leaves the system's.
	RecvBuffer, SendBuffer int
	// DeferAccept (Linux) has the kernel hold a connection until its
	// first bytes come, for up to this long (TCP_DEFER_ACCEPT): the loop
	// never sees a client that connects and says nothing in that time.
	DeferAccept time.Duration
	// FastOpen (Linux) accepts data in the SYN from clients that
	// have a cookie (TCP_FASTOPEN), with up to this many such
	// connections pending.
	FastOpen int
	// BindToDevice (Linux) takes connections arriving on this network
	// interface only (SO_BINDTODEVICE; needs CAP_NET_RAW).
	BindToDevice string
	// Control, if not nil, is called with the socket after the options
	// above are set and before it binds, as net.ListenConfig's Control.
	Control func(network, address string, c syscall.RawConn) error
}

// ListenWith is Listen with lc: a PROXY header, TLS, socket options.
func (e *Engine) ListenWith(network, addr string, lc ListenConfig) (net.Addr, error) {
	if err := lc.check(network); err != nil {
		return nil, err
	}
	return e.listen(network, addr, &lc)
}

// ServeListener serves the connections of ln, a listener made elsewhere
// (inherited from a parent process, activated by systemd, handed over by
// the process being replaced), on the loops, as Listen's: it takes a
// duplicate of ln's descriptor, closes ln, and returns ln's address. ln
// must be a *net.TCPListener or *net.UnixListener (one made by
// net.FileListener included); lc says what the connections begin with,
// and its socket options must be zero. A Unix socket's file is left in
// place when the engine stops: it was made elsewhere.
func (e *Engine) ServeListener(ln net.Listener, lc ListenConfig) (net.Addr, error) {
	if !lc.sockOpts().Zero() || lc.Backlog != 0 || lc.ReusePort || lc.Control != nil {
		return nil, errors.New("engine: ServeListener: socket options are for the sockets ListenWith opens")
	}
	network := ln.Addr().Network()
	if err := lc.check(network); err != nil {
		return nil, err
	}
	if e.stopping() {
		return nil, ErrEngineStopped
	}
	sc, ok := ln.(syscall.Conn)
	if !ok {
		return nil, fmt.Errorf("engine: ServeListener: a %T has no descriptor: %w", ln, errors.ErrUnsupported)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the engine's copy still listens
	}
	fd, err := sock.DupConn(sc)
	if err != nil {
		return nil, err
	}
	a := ln.Addr()
	sock.Release(ln)
	l := &listener{e: e, lp: e.loops[0], fd: fd, network: network, addr: a, tls: lc.TLS, proxy: lc.Proxy}
	l.retry.Fire = l.resume
	if err := e.addListener(l); err != nil {
		return nil, err
	}
	return a, nil
}

// check refuses what cannot serve network.
func (lc *ListenConfig) check(network string) error {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
	case "udp", "udp4", "udp6":
		if lc.TLS != nil {
			return fmt.Errorf("engine: listen %s: %w", network, errTLSDatagram)
		}
		if lc.Proxy != nil {
			return fmt.Errorf("engine: listen %s: PROXY protocol needs a stream network", network)
		}
	default:
		return fmt.Errorf("engine: listen: unsupported network %q", network)
	}
	return nil
}

// sockOpts returns the options sock sets before the bind.
func (lc *ListenConfig) sockOpts() sock.ListenOpts {
	return sock.ListenOpts{
		RecvBuffer:   lc.RecvBuffer,
		SendBuffer:   lc.SendBuffer,
		DeferAccept:  lc.DeferAccept,
		FastOpen:     lc.FastOpen,
		BindToDevice: lc.BindToDevice,
	}
}
