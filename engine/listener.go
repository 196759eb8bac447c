package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"hash/fnv"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// Accept back-off: when accept(2) fails for want of resources (EMFILE,
// ENFILE, ENOBUFS, ENOMEM), the listener waits before trying again, from
// minBackoff doubling to maxBackoff, instead of spinning on a connection
// it cannot take.
const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

// listener accepts connections for the engine on one loop.
type listener struct {
	e       *Engine
	lp      *eloop
	fd      int
	tag     loop.Tag
	network string
	addr    net.Addr
	path    string         // a unix socket's file, removed on close
	tls     *tls.Config    // ListenTLS: handshake with each connection
	proxy   *ProxyProtocol // ListenConfig.Proxy: a header first
	spread  bool           // the only acceptor: Options.Balance picks loops
	backoff time.Duration
	retry   loop.Timer
	closed  bool
}

// Listen opens a listener on network ("tcp", "tcp4", "tcp6", "unix" or
// "udp", "udp4", "udp6") and addr, and returns its address. With
// Options.ReusePort, TCP and UDP get one socket per loop. A UDP socket is
// served as one Conn whose OnData sees each datagram with its source.
// Accepted TCP connections have TCP_NODELAY set, as in package net.
// ListenWith says more: a PROXY header, TLS, socket options.
func (e *Engine) Listen(network, addr string) (net.Addr, error) {
	return e.ListenWith(network, addr, ListenConfig{})
}

func (e *Engine) listen(network, addr string, lc *ListenConfig) (net.Addr, error) {
	if e.stopping() {
		return nil, ErrEngineStopped
	}
	if network == "udp" || network == "udp4" || network == "udp6" {
		return e.listenUDP(network, addr, lc)
	}
	n := 1
	if e.opts.ReusePort && network != "unix" {
		n = len(e.loops)
	}
	var first net.Addr
	for i := range n {
		fd, a, err := listenFD(network, addr, n > 1, e.opts.TCPKeepAlive, lc)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			first, addr = a, a.String() // later sockets bind the same port
		}
		ln := &listener{e: e, lp: e.loops[i], fd: fd, network: network, addr: a, tls: lc.TLS, proxy: lc.Proxy, spread: n == 1}
		if network == "unix" {
			ln.path = a.String()
		}
		ln.retry.Fire = ln.resume
		if err := e.addListener(ln); err != nil {
			return nil, err
		}
	}
	return first, nil
}

func (e *Engine) addListener(ln *listener) error {
	e.mu.Lock()
	if e.state >= stateStopping {
		e.mu.Unlock()
		sock.Close(ln.fd)
		return ErrEngineStopped
	}
	e.listeners = append(e.listeners, ln)
	e.mu.Unlock()
	return e.serve(held{ln: ln})
}

// listenFD opens a listening socket with package net (for address
// resolution and options) and keeps a close-on-exec, non-blocking
// duplicate of its descriptor. A TCP listener gets the keep-alive its
// accepted connections are to have (Options.TCPKeepAlive, package net's
// 15 s when 0), which they inherit at no cost per accept (Linux:
// tcp_create_openreq_child arms the keep-alive timer of a child of an
// SO_KEEPALIVE listener, whose timings it copies; the BSDs copy the
// listener's options in sonewconn). lc's socket options are set before
// the bind, its backlog after the listen.
func listenFD(network, addr string, reusePort bool, keepAlive time.Duration, lc *ListenConfig) (int, net.Addr, error) {
	if keepAlive == 0 {
		keepAlive = defaultKeepAlive
	}
	if fd, a, ok, err := listenNative(network, addr, reusePort || lc.ReusePort, keepAlive, lc); ok {
		return fd, a, err // Windows: a socket the IOCP port can take
	}
	lcfg := net.ListenConfig{Control: func(network, address string, rc syscall.RawConn) error {
		var serr error
		err := rc.Control(func(fd uintptr) { serr = setListenOpts(int(fd), network, reusePort, keepAlive, lc) })
		if err == nil && serr == nil && lc.Control != nil {
			serr = lc.Control(network, address, rc)
		}
		return errors.Join(err, serr)
	}}
	ln, err := lcfg.Listen(context.Background(), network, addr)
	if err != nil {
		return -1, nil, err
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false) // the engine's copy still listens
	}
	fd, err := sock.DupConn(ln.(syscall.Conn))
	if err == nil && lc.Backlog > 0 {
		if err = sock.Relisten(fd, lc.Backlog); err != nil {
			sock.Close(fd)
		}
	}
	if err != nil {
		ln.Close()
		return -1, nil, err
	}
	sock.Release(ln)
	return fd, ln.Addr(), nil
}

// setListenOpts sets a new listening socket's options, before its bind.
func setListenOpts(fd int, network string, reusePort bool, keepAlive time.Duration, lc *ListenConfig) error {
	if reusePort || lc.ReusePort {
		if err := sock.SetsockoptInt(fd, sock.ReusePort, 1); err != nil {
			return err
		}
	}
	if keepAlive > 0 && isTCP(network) {
		sock.SetKeepAlive(fd, keepAlive) // best effort, as in package net
	}
	return lc.sockOpts().Apply(fd, isTCP(network))
}

func (ln *listener) start(l *loop.Loop) {
	if ln.lp.dead {
		ln.shut(l)
	}
	if ln.closed {
		return
	}
	tag, err := l.Attach(ln.fd, true, ln)
	if err != nil {
		sock.Close(ln.fd)
		ln.closed = true
		return
	}
	ln.tag = tag
	l.Accept(tag)
}

// Complete handles an accept's completion.
func (ln *listener) Complete(l *loop.Loop, p loop.Completion) {
	if p.Canceled() {
		return
	}
	switch p.Errno() {
	case 0:
		ln.backoff = 0
		ln.accepted(p.FD(), p.Peer(), p.From())
		l.Accept(ln.tag)
	case syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM:
		ln.lp.stats.acceptErrors.Add(1)
		ln.backoff = min(max(2*ln.backoff, minBackoff), maxBackoff)
		l.Schedule(&ln.retry, l.Now().Add(ln.backoff))
	default:
		ln.lp.stats.acceptErrors.Add(1)
		l.Accept(ln.tag)
	}
}

func (ln *listener) resume(time.Time) {
	if !ln.closed {
		ln.lp.l.Accept(ln.tag)
	}
}

// accepted hands a new connection to its loop. The peer is in peer when
// the backend decoded it without allocating, and in from otherwise.
func (ln *listener) accepted(fd int, peer netip.AddrPort, from sock.Sockaddr) {
	e := ln.e
	if isTCP(ln.network) {
		// As package net does for every TCP connection: small replies go
		// out at once instead of waiting on Nagle's algorithm.
		sock.SetsockoptInt(fd, sock.NoDelay, 1)
	}
	// An accepted TCP conn keeps its peer as a netip.AddrPort and shares
	// the listener's address unless that is a wildcard: no allocation,
	// no getsockname(2). RemoteAddr and LocalAddr build the rest on demand.
	var raddr net.Addr
	if peer.IsValid() {
		peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port()) // as sock.AddrPort
	} else if ap, ok := sock.AddrPort(from); ok {
		peer = ap
	} else {
		raddr = sock.Addr(ln.network, from)
	}
	laddr := &ln.addr
	if isWildcard(ln.addr) {
		laddr = nil
	}
	target := ln.lp
	if ln.spread {
		target = e.pick(func() net.Addr {
			if raddr != nil {
				return raddr
			}
			return net.TCPAddrFromAddrPort(peer)
		})
	}
	c := newConn(e, target, fd, true, ln.network, laddr, raddr)
	c.kind |= kCapped
	c.setPeer(peer)
	if ln.tls != nil {
		c.setTLS(newTLSState(c, ln.tls, false))
	}
	c.awaitProxy(ln.proxy)
	if target == ln.lp {
		c.attach(ln.lp.l)
		return
	}
	if target.l.Post(loop.Func(c.attach)) != nil {
		target.unassign()
		c.fd.Close()
	}
}

// close stops accepting: the loop releases the socket.
func (ln *listener) close() {
	ln.lp.l.Post(loop.Func(ln.shut))
}

// shut releases the socket. It runs on ln's loop.
func (ln *listener) shut(l *loop.Loop) {
	if ln.closed {
		return
	}
	ln.closed = true
	l.Unschedule(&ln.retry)
	if ln.tag != 0 {
		l.Release(ln.tag)
	}
	sock.Close(ln.fd)
	if ln.path != "" {
		os.Remove(ln.path)
	}
}

func addrHash(a net.Addr) uint32 {
	h := fnv.New32a()
	switch a := a.(type) {
	case *net.TCPAddr:
		h.Write(a.IP)
	case nil:
	default:
		h.Write([]byte(a.String()))
	}
	return h.Sum32()
}

// isWildcard reports whether a is an IP address of any interface, so
// that a conn accepted there has an address of its own.
func isWildcard(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return ok && (t.IP == nil || t.IP.IsUnspecified())
}
