package netconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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
	Backend Backend
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
	std.Close()
	if err != nil {
		if path != "" {
			os.Remove(path)
		}
		return nil, &net.OpError{Op: "listen", Net: network, Addr: addr, Err: err}
	}
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

	mu      sync.Mutex // guards the parked Accept's fields
	waiting bool
	nfd     int
	from    unix.Sockaddr
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
		fd, sa, err := ln.accept()
		switch {
		case err == nil:
			return ln.newConn(fd, sa)
		case errors.Is(err, unix.ECONNABORTED), errors.Is(err, unix.EINTR):
			continue
		case !errors.Is(err, unix.EAGAIN):
			return nil, ln.opError(os.NewSyscallError("accept", err))
		}
		fd, sa, err = ln.wait()
		if err != nil {
			return nil, err
		}
		if fd >= 0 {
			return ln.newConn(fd, sa)
		}
	}
}

// accept tries accept(2) from the caller's goroutine.
func (ln *Listener) accept() (int, unix.Sockaddr, error) {
	lfd, ok := ln.fd.Acquire()
	if !ok {
		return -1, nil, net.ErrClosed
	}
	defer ln.fd.Release()
	return sock.Accept(lfd)
}

// wait has the loop accept and parks until it did, or was stopped; a
// negative descriptor with a nil error means try again.
func (ln *Listener) wait() (int, unix.Sockaddr, error) {
	ln.mu.Lock()
	ln.waiting, ln.nfd, ln.from, ln.err = true, -1, nil, nil
	ln.mu.Unlock()
	if ln.lp.l.Post((*acceptTask)(ln)) != nil {
		ln.complete(-1, nil, ln.opError(net.ErrClosed))
	}
	<-ln.ready
	return ln.nfd, ln.from, ln.err
}

func (ln *Listener) complete(fd int, from unix.Sockaddr, err error) {
	ln.mu.Lock()
	if ln.waiting {
		ln.waiting, ln.nfd, ln.from, ln.err = false, fd, from, err
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
		ln.complete(-1, nil, ln.opError(net.ErrClosed))
		return
	}
	if err := ln.begin(l, ln, true); err != nil {
		ln.complete(-1, nil, ln.opError(err))
		return
	}
	l.Accept(ln.tag)
	ln.retime(l)
}

// Complete takes the loop's accept completions.
func (ln *Listener) Complete(l *loop.Loop, cp loop.Completion) {
	ln.ended(l)
	switch {
	case cp.Errno() == unix.ECONNABORTED:
		ln.complete(-1, nil, nil)
	case cp.Errno() != 0:
		ln.complete(-1, nil, ln.opError(os.NewSyscallError("accept", cp.Errno())))
	case cp.Canceled() && ln.closed.Load():
		ln.complete(-1, nil, ln.opError(net.ErrClosed))
	case cp.Canceled():
		ln.complete(-1, nil, ln.opError(errTimeout))
	default:
		ln.complete(cp.FD(), cp.From(), nil)
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
	ln.complete(-1, nil, ln.opError(net.ErrClosed))
	if ln.path != "" {
		os.Remove(ln.path)
	}
	ln.g.release()
	return nil
}

// newConn wraps an accepted descriptor.
func (ln *Listener) newConn(fd int, sa unix.Sockaddr) (*Conn, error) {
	if ln.network != "unix" {
		// As package net does: small writes go out at once.
		unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
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
		if lsa, err := unix.Getsockname(fd); err == nil {
			laddr = sock.Addr(ln.network, lsa)
		}
	}
	return newConn(g, fd, ln.network, laddr, sock.Addr(ln.network, sa), nil), nil
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
