package netconn

import (
	"context"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// PacketConn is a datagram socket (UDP or unixgram) on gale's loops: a
// net.PacketConn and, when dialed, a net.Conn, like *net.UDPConn.
//
// Every method is safe from any goroutine. A ReadFrom that finds no
// datagram has the loop receive into its slice and parks until one came;
// when its deadline passes or Close interrupts it, the receive is
// cancelled and its end collected before ReadFrom returns, so the slice
// is the caller's again. A WriteTo that finds the socket's buffer full
// waits in poll(2) on its own thread until there is room (UDP sends
// rarely wait).
type PacketConn struct {
	single  // its deadline is the read deadline
	g       *group
	network string
	laddr   net.Addr
	raddr   net.Addr // a dialed conn's peer, else nil

	rserial sync.Mutex
	wserial sync.Mutex

	mu      sync.Mutex // guards the parked ReadFrom's fields
	waiting bool
	buf     []byte
	n       int
	from    sock.Sockaddr
	err     error
	ready   chan struct{}

	wdeadline atomic.Int64
}

// ListenPacket announces on the local address, as net.ListenPacket;
// network is "udp", "udp4", "udp6" or "unixgram".
func ListenPacket(network, address string) (net.PacketConn, error) {
	var lc ListenConfig
	return lc.ListenPacket(context.Background(), network, address)
}

// ListenPacket announces on the local address, as
// net.ListenConfig.ListenPacket; network is "udp", "udp4", "udp6" or
// "unixgram".
func (lc *ListenConfig) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	switch network {
	case "udp", "udp4", "udp6", "unixgram":
	default:
		return nil, &net.OpError{Op: "listen", Net: network, Err: net.UnknownNetworkError(network)}
	}
	std, err := lc.ListenConfig.ListenPacket(ctx, network, address)
	if err != nil {
		return nil, err
	}
	return adoptPacket(std.(net.Conn), network, lc.Backend, "listen")
}

// adoptPacket moves a datagram socket onto kind's loops.
func adoptPacket(nc net.Conn, network string, kind backend.Kind, op string) (*PacketConn, error) {
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	fd, err := sock.DupConn(nc.(syscall.Conn))
	if err != nil {
		nc.Close()
		return nil, &net.OpError{Op: op, Net: network, Addr: laddr, Err: err}
	}
	sock.Release(nc)
	g, err := acquire(kind)
	if err != nil {
		sock.Close(fd)
		return nil, &net.OpError{Op: op, Net: network, Addr: laddr, Err: err}
	}
	pc := &PacketConn{g: g, network: network, laddr: laddr, raddr: raddr, ready: make(chan struct{}, 1)}
	if raddr != nil && isNilAddr(raddr) {
		pc.raddr = nil
	}
	pc.init(fd, g.pick(), loop.OpRecvFrom)
	return pc, nil
}

func isNilAddr(a net.Addr) bool {
	u, ok := a.(*net.UnixAddr)
	return ok && u == nil
}

// LocalAddr returns the local address.
func (pc *PacketConn) LocalAddr() net.Addr { return pc.laddr }

// RemoteAddr returns the peer of a dialed conn, else nil.
func (pc *PacketConn) RemoteAddr() net.Addr { return pc.raddr }

// ReadFrom reads one datagram into p and returns its size and source; a
// datagram longer than p is truncated. After the read deadline it fails
// with an error matching os.ErrDeadlineExceeded; after Close, with
// net.ErrClosed.
func (pc *PacketConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, sa, err := pc.readFrom(p)
	if err != nil {
		return n, nil, err
	}
	return n, sock.Addr(pc.network, sa), nil
}

// Read reads one datagram, of a dialed conn.
func (pc *PacketConn) Read(p []byte) (int, error) {
	n, _, err := pc.readFrom(p)
	return n, err
}

func (pc *PacketConn) readFrom(p []byte) (int, sock.Sockaddr, error) {
	pc.rserial.Lock()
	defer pc.rserial.Unlock()
	if pc.closed.Load() {
		return 0, nil, pc.opError("read", net.ErrClosed)
	}
	if passed(pc.deadline.Load()) {
		return 0, nil, pc.opError("read", errTimeout)
	}
	for {
		fd, ok := pc.fd.Acquire()
		if !ok {
			return 0, nil, pc.opError("read", net.ErrClosed)
		}
		n, sa, err := sock.Recvfrom(fd, p)
		pc.fd.Release()
		switch err {
		case nil:
			return n, sa, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return pc.wait(p)
		}
		return 0, nil, pc.opError("read", os.NewSyscallError("recvfrom", err))
	}
}

// wait has the loop receive into p and parks until it did or was
// stopped (the receive's end collected).
func (pc *PacketConn) wait(p []byte) (int, sock.Sockaddr, error) {
	pc.mu.Lock()
	pc.waiting, pc.buf, pc.n, pc.from, pc.err = true, p, 0, nil, nil
	pc.mu.Unlock()
	if pc.lp.l.Post((*recvFromTask)(pc)) != nil {
		pc.complete(0, nil, pc.opError("read", net.ErrClosed))
	}
	<-pc.ready
	return pc.n, pc.from, pc.err
}

func (pc *PacketConn) complete(n int, from sock.Sockaddr, err error) {
	pc.mu.Lock()
	if pc.waiting {
		pc.waiting, pc.buf, pc.n, pc.from, pc.err = false, nil, n, from, err
		pc.ready <- struct{}{}
	}
	pc.mu.Unlock()
}

type recvFromTask PacketConn

func (t *recvFromTask) Run(l *loop.Loop) {
	pc := (*PacketConn)(t)
	if pc.closing || pc.closed.Load() {
		pc.complete(0, nil, pc.opError("read", net.ErrClosed))
		return
	}
	if err := pc.begin(l, (*packetOwner)(pc), false); err != nil {
		pc.complete(0, nil, pc.opError("read", err))
		return
	}
	l.RecvFrom(pc.tag, pc.buf)
	pc.retime(l)
}

// packetOwner is the loop's Owner for a PacketConn, under another type so
// that Complete stays out of PacketConn's methods.
type packetOwner PacketConn

// Complete takes the loop's receive completions.
func (o *packetOwner) Complete(l *loop.Loop, cp loop.Completion) {
	pc := (*PacketConn)(o)
	pc.ended(l)
	switch {
	case cp.Errno() != 0:
		pc.complete(0, nil, pc.opError("read", os.NewSyscallError("recvfrom", cp.Errno())))
	case cp.Canceled() && pc.closed.Load():
		pc.complete(0, nil, pc.opError("read", net.ErrClosed))
	case cp.Canceled():
		pc.complete(0, nil, pc.opError("read", errTimeout))
	default:
		pc.complete(cp.N(), cp.From(), nil)
	}
	pc.settle(l)
}

// WriteTo sends p as one datagram to addr.
func (pc *PacketConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	sa, err := sockaddr(addr)
	if err != nil {
		return 0, &net.OpError{Op: "write", Net: pc.network, Source: pc.laddr, Addr: addr, Err: err}
	}
	return pc.send(p, sa, addr)
}

// Write sends p as one datagram to a dialed conn's peer.
func (pc *PacketConn) Write(p []byte) (int, error) {
	if pc.raddr == nil {
		return 0, pc.opError("write", syscall.EDESTADDRREQ)
	}
	return pc.send(p, nil, pc.raddr)
}

func (pc *PacketConn) send(p []byte, sa sock.Sockaddr, addr net.Addr) (int, error) {
	pc.wserial.Lock()
	defer pc.wserial.Unlock()
	fail := func(err error) (int, error) {
		return 0, &net.OpError{Op: "write", Net: pc.network, Source: pc.laddr, Addr: addr, Err: err}
	}
	for {
		if pc.closed.Load() {
			return fail(net.ErrClosed)
		}
		d := pc.wdeadline.Load()
		if passed(d) {
			return fail(errTimeout)
		}
		fd, ok := pc.fd.Acquire()
		if !ok {
			return fail(net.ErrClosed)
		}
		err := sock.Sendto(fd, p, sa)
		if err == syscall.EAGAIN {
			err = pollWait(fd, sock.PollOut, d)
		} else if err == nil {
			pc.fd.Release()
			return len(p), nil
		}
		pc.fd.Release()
		if err != nil && err != syscall.EINTR && err != syscall.EAGAIN {
			return fail(os.NewSyscallError("sendto", err))
		}
	}
}

// pollWait waits in poll(2) for events on fd, at most 10 ms (and not past
// deadline d) so that the caller sees a Close or a deadline soon.
func pollWait(fd int, events int16, d int64) error {
	wait := 10 * time.Millisecond
	if d != 0 {
		wait = min(wait, time.Until(time.Unix(0, d)))
	}
	return sock.Poll(fd, events, int(max(wait, time.Millisecond)/time.Millisecond))
}

// SetDeadline sets the read and write deadlines.
func (pc *PacketConn) SetDeadline(t time.Time) error {
	if err := pc.SetReadDeadline(t); err != nil {
		return err
	}
	return pc.SetWriteDeadline(t)
}

// SetReadDeadline sets the time after which ReadFrom fails with an error
// matching os.ErrDeadlineExceeded; a zero t means none.
func (pc *PacketConn) SetReadDeadline(t time.Time) error {
	if pc.closed.Load() {
		return pc.opError("set", net.ErrClosed)
	}
	pc.setDeadline(t)
	return nil
}

// SetWriteDeadline sets the time after which WriteTo fails with an error
// matching os.ErrDeadlineExceeded; a zero t means none.
func (pc *PacketConn) SetWriteDeadline(t time.Time) error {
	if pc.closed.Load() {
		return pc.opError("set", net.ErrClosed)
	}
	pc.wdeadline.Store(nanos(t))
	return nil
}

// Close closes the socket: a blocked ReadFrom or WriteTo returns
// net.ErrClosed. As in package net, a bound unixgram socket's file stays.
func (pc *PacketConn) Close() error {
	if !pc.shut() {
		return pc.opError("close", net.ErrClosed)
	}
	pc.complete(0, nil, pc.opError("read", net.ErrClosed))
	pc.g.release()
	return nil
}

// SyscallConn returns the raw socket, as *net.UDPConn's.
func (pc *PacketConn) SyscallConn() (syscall.RawConn, error) {
	return rawConn{&pc.fd}, nil
}

// SetReadBuffer sets the socket's receive buffer (SO_RCVBUF).
func (pc *PacketConn) SetReadBuffer(n int) error {
	return setInt(&pc.fd, sock.RcvBuf, n)
}

// SetWriteBuffer sets the socket's send buffer (SO_SNDBUF).
func (pc *PacketConn) SetWriteBuffer(n int) error {
	return setInt(&pc.fd, sock.SndBuf, n)
}

func (pc *PacketConn) opError(op string, err error) error {
	return sock.OpError(op, pc.network, pc.laddr, pc.raddr, err)
}
