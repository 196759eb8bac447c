package netconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// ListenConfig is net.ListenConfig with the choice of backend. The
// embedded net.ListenConfig creates the socket (its Control, KeepAlive
// and the rest apply as in package net); the socket then moves onto
// gale's loops.
type ListenConfig struct {
	net.ListenConfig
	// Backend chooses the loops' kernel interface; GALE_BACKEND
	// overrides it.
	Backend backend.Kind
}

// Listen announces on the local network address, as net.Listen; network
// is "tcp", "tcp4", "tcp6" or "unix". The listener's Accept returns
// *Conn values.
func Listen(network, address string) (net.Listener, error) {
	var lc ListenConfig
	return lc.Listen(context.Background(), network, address)
}

// Listen announces on the local network address, as
// net.ListenConfig.Listen; network is "tcp", "tcp4", "tcp6" or "unix".
func (lc *ListenConfig) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
	default:
		return nil, &net.OpError{Op: "listen", Net: network, Err: net.UnknownNetworkError(network)}
	}
	std, err := lc.ListenConfig.Listen(ctx, network, address)
	if err != nil {
		return nil, err
	}
	path := ""
	if ul, ok := std.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // our copy still listens
		path = address
	}
	addr := std.Addr()
	fd, err := sock.DupConn(std.(syscall.Conn))
	if err != nil {
		std.Close()
		if path != "" {
			os.Remove(path)
		}
		return nil, &net.OpError{Op: "listen", Net: network, Addr: addr, Err: err}
	}
	sock.Release(std)
	g, err := acquire(lc.Backend)
	if err != nil {
		sock.Close(fd)
		if path != "" {
			os.Remove(path)
		}
		return nil, &net.OpError{Op: "listen", Net: network, Addr: addr, Err: err}
	}
	ln := &Listener{g: g, network: network, addr: addr, path: path, ready: make(chan struct{}, 1)}
	ln.init(fd, g.pick(), loop.OpAccept)
	return ln, nil
}

// Listener is a stream listener on gale's loops. Its methods are safe
// from any goroutine; Accepts are served one at a time.
type Listener struct {
	single
	g       *group
	network string
	addr    net.Addr
	path    string // a Unix socket's file, removed by Close

	serial sync.Mutex // one Accept at a time; held while parked
	// rsa receives the peer's address of accept's sock.AcceptPeer, so an
	// inet peer's costs no allocation. serial guards it.
	rsa sock.RawSockaddrAny

	mu      sync.Mutex // guards the parked Accept's fields
	waiting bool
	nfd     int
	peer    netip.AddrPort
	from    sock.Sockaddr
	err     error
	ready   chan struct{}
}

// Addr returns the listener's address (with the port the kernel chose).
func (ln *Listener) Addr() net.Addr { return ln.addr }

// Accept waits for and returns the next connection, a *Conn.
func (ln *Listener) Accept() (net.Conn, error) {
	c, err := ln.AcceptConn()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// AcceptConn is Accept returning the *Conn. After Close it fails with
// net.ErrClosed; after the deadline, with an error matching
// os.ErrDeadlineExceeded. A failure for want of descriptors (EMFILE,
// ENFILE) is a temporary net.Error, which net/http's Serve waits on.
func (ln *Listener) AcceptConn() (*Conn, error) {
	ln.serial.Lock()
	defer ln.serial.Unlock()
	for {
		if ln.closed.Load() {
			return nil, ln.opError(net.ErrClosed)
		}
		if passed(ln.deadline.Load()) {
			return nil, ln.opError(errTimeout)
		}
		fd, peer, sa, err := ln.accept()
		switch {
		case err == nil:
			return ln.newConn(fd, peer, sa)
		case errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EINTR):
			continue
		case !errors.Is(err, syscall.EAGAIN):
			return nil, ln.opError(os.NewSyscallError("accept", err))
		}
		fd, peer, sa, err = ln.wait()
		if err != nil {
			return nil, err
		}
		if fd >= 0 {
			return ln.newConn(fd, peer, sa)
		}
	}
}

// accept tries accept(2) from the caller's goroutine, which holds
// ln.serial. The peer is in peer or, when that is invalid, in the
// Sockaddr (see sock.AcceptPeer).
func (ln *Listener) accept() (int, netip.AddrPort, sock.Sockaddr, error) {
	lfd, ok := ln.fd.Acquire()
	if !ok {
		return -1, netip.AddrPort{}, nil, net.ErrClosed
	}
	defer ln.fd.Release()
	return sock.AcceptPeer(lfd, &ln.rsa)
}

// wait has the loop accept and parks until it did, or was stopped; a
// negative descriptor with a nil error means try again.
func (ln *Listener) wait() (int, netip.AddrPort, sock.Sockaddr, error) {
	ln.mu.Lock()
	ln.waiting, ln.nfd, ln.peer, ln.from, ln.err = true, -1, netip.AddrPort{}, nil, nil
	ln.mu.Unlock()
	if ln.lp.l.Post((*acceptTask)(ln)) != nil {
		ln.fail(ln.opError(net.ErrClosed))
	}
	<-ln.ready
	return ln.nfd, ln.peer, ln.from, ln.err
}

// fail ends a parked Accept with err, or with nothing to accept (try
// again) when err is nil.
func (ln *Listener) fail(err error) { ln.complete(-1, netip.AddrPort{}, nil, err) }

// complete ends a parked Accept with the connection fd from peer (or
// from, when peer is invalid), or with err; with no Accept parked, the
// connection is closed.
func (ln *Listener) complete(fd int, peer netip.AddrPort, from sock.Sockaddr, err error) {
	ln.mu.Lock()
	if ln.waiting {
		ln.waiting, ln.nfd, ln.peer, ln.from, ln.err = false, fd, peer, from, err
		ln.ready <- struct{}{}
	} else if fd >= 0 {
		sock.Close(fd)
	}
	ln.mu.Unlock()
}

type acceptTask Listener

func (t *acceptTask) Run(l *loop.Loop) {
	ln := (*Listener)(t)
	if ln.closing || ln.closed.Load() {
		ln.fail(ln.opError(net.ErrClosed))
		return
	}
	if err := ln.begin(l, (*listenerOwner)(ln), true); err != nil {
		ln.fail(ln.opError(err))
		return
	}
	l.Accept(ln.tag)
	ln.retime(l)
}

// listenerOwner is the loop's Owner for a Listener, under another type so
// that Complete stays out of Listener's methods.
type listenerOwner Listener

// Complete takes the loop's accept completions.
func (o *listenerOwner) Complete(l *loop.Loop, cp loop.Completion) {
	ln := (*Listener)(o)
	ln.ended(l)
	switch {
	case cp.Errno() == syscall.ECONNABORTED:
		ln.fail(nil)
	case cp.Errno() != 0:
		ln.fail(ln.opError(os.NewSyscallError("accept", cp.Errno())))
	case cp.Canceled() && ln.closed.Load():
		ln.fail(ln.opError(net.ErrClosed))
	case cp.Canceled():
		ln.fail(ln.opError(errTimeout))
	default:
		ln.complete(cp.FD(), cp.Peer(), cp.From(), nil)
	}
	ln.settle(l)
}

// SetDeadline sets the time after which Accept fails with an error
// matching os.ErrDeadlineExceeded; a zero t means none.
func (ln *Listener) SetDeadline(t time.Time) error {
	if ln.closed.Load() {
		return ln.opError(net.ErrClosed)
	}
	ln.setDeadline(t)
	return nil
}

// Close stops listening: a blocked Accept returns net.ErrClosed. A Unix
// socket's file is removed. Connections already accepted stay open.
func (ln *Listener) Close() error {
	if !ln.shut() {
		return ln.opError(net.ErrClosed)
	}
	ln.fail(ln.opError(net.ErrClosed))
	if ln.path != "" {
		os.Remove(ln.path)
	}
	ln.g.release()
	return nil
}

// newConn wraps an accepted descriptor, whose peer is peer or, when that
// is invalid, sa.
func (ln *Listener) newConn(fd int, peer netip.AddrPort, sa sock.Sockaddr) (*Conn, error) {
	if ln.network != "unix" {
		// As package net does: small writes go out at once.
		sock.SetsockoptInt(fd, sock.NoDelay, 1)
	}
	g, err := acquire(ln.g.kind)
	if err != nil {
		sock.Close(fd)
		return nil, ln.opError(err)
	}
	// The local address is the listener's, unless that is a wildcard:
	// then the kernel says which (package net asks it every time).
	laddr := ln.addr
	if isWildcard(laddr) {
		laddr = nil
		if lsa, err := sock.Getsockname(fd); err == nil {
			laddr = sock.Addr(ln.network, lsa)
		}
	}
	// The peer as package net shows it: TCPAddrFromAddrPort keeps a
	// v4-mapped peer in 16 bytes, as sock.Addr does.
	raddr := sock.Addr(ln.network, sa)
	if peer.IsValid() {
		raddr = net.TCPAddrFromAddrPort(peer)
	}
	return newConn(g, fd, ln.network, laddr, raddr, nil), nil
}

func (ln *Listener) opError(err error) error {
	return &net.OpError{Op: "accept", Net: ln.network, Addr: ln.addr, Err: err}
}

// String names the listener, for logs.
func (ln *Listener) String() string {
	return fmt.Sprintf("netconn.Listener(%s %s)", ln.network, ln.addr)
}

// isWildcard reports whether a is an IP address of any interface.
func isWildcard(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && (t.IP == nil || t.IP.IsUnspecified())
}
