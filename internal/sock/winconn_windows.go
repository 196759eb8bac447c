package sock

import (
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// slice bounds each wait of a blocking call for the poll hub: the call
// then looks again at its socket, which sees a receiving side shut by
// another handle of the socket (Windows' shutdown(SD_RECEIVE) does not
// make a socket readable; the recv after it fails). Close and new
// deadlines wake the waits at once (side.kick).
const slice = 200 * time.Millisecond

// side is one direction of a socket's blocking calls: its deadline and
// its registration with the poll hub.
type side struct {
	dl atomic.Int64 // Unix nanoseconds; 0: none
	w  pollWaiter
}

// wait parks until the socket is ready, a slice passes, the deadline
// passes, the side is kicked or closed is set, and reports whether it
// was signalled; the caller retries its call.
func (sd *side) wait(closed *atomic.Bool) (bool, error) {
	if closed.Load() {
		return false, net.ErrClosed
	}
	d := slice
	if dl := sd.dl.Load(); dl != 0 {
		left := time.Until(time.Unix(0, dl))
		if left <= 0 {
			return false, os.ErrDeadlineExceeded
		}
		d = min(d, left)
	}
	return hub.wait(&sd.w, d)
}

// setDeadline sets the side's deadline and wakes its waiting call.
func (sd *side) setDeadline(t time.Time) {
	sd.dl.Store(nanos(t))
	hub.kick(&sd.w)
}

// winConn is a net.Conn over a socket, for the net backend's blocking
// calls (a view of the caller's socket, which it does not own) and for
// FileConn (a duplicate of its own). Its calls wait for the poll hub, and
// deadlines and Close end them; safe for concurrent use as a net.Conn
// is.
type winConn struct {
	s            windows.Handle
	own          bool // Close closes s
	closed       atomic.Bool
	rd, wr       side
	laddr, raddr net.Addr
}

// newWinConn wraps socket s; with own, it owns s from now on.
func newWinConn(s windows.Handle, own bool) *winConn {
	c := &winConn{s: s, own: own}
	c.rd.w = newPollWaiter(s, true)
	c.wr.w = newPollWaiter(s, false)
	if sa, err := windows.Getsockname(s); err == nil {
		c.laddr = tcpAddr(sa)
	}
	if sa, err := windows.Getpeername(s); err == nil {
		c.raddr = tcpAddr(sa)
	}
	return c
}

// tcpAddr converts a socket address to package net's.
func tcpAddr(sa windows.Sockaddr) net.Addr {
	switch sa := sa.(type) {
	case *windows.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]).To16(), Port: sa.Port}
	case *windows.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}
	}
	return nil
}

func (c *winConn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.laddr, Addr: c.raddr, Err: err}
}

func (c *winConn) Read(p []byte) (int, error) {
	for {
		if c.closed.Load() {
			return 0, c.opError("read", net.ErrClosed)
		}
		n, e := sockRead(c.s, p)
		switch {
		case e == 0 && n == 0 && len(p) > 0:
			return 0, io.EOF
		case e == 0:
			return n, nil
		case e != syscall.EAGAIN:
			return 0, c.opError("read", os.NewSyscallError("recv", e))
		}
		if _, err := c.rd.wait(&c.closed); err != nil {
			return 0, c.opError("read", err)
		}
	}
}

func (c *winConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		if c.closed.Load() {
			return done, c.opError("write", net.ErrClosed)
		}
		n, e := sockWrite(c.s, p[done:])
		done += n
		switch {
		case e == 0:
			continue
		case e != syscall.EAGAIN:
			return done, c.opError("write", os.NewSyscallError("send", e))
		}
		if _, err := c.wr.wait(&c.closed); err != nil {
			return done, c.opError("write", err)
		}
	}
	return done, nil
}

// Close ends the calls waiting on c at once, and closes its socket if
// c owns it.
func (c *winConn) Close() error {
	if c.closed.Swap(true) {
		return c.opError("close", net.ErrClosed)
	}
	hub.kick(&c.rd.w)
	hub.kick(&c.wr.w)
	if !c.own {
		return nil
	}
	return windows.Closesocket(c.s)
}

// take hands c's socket to the caller, who owns it from now on, and
// closes c; it reports false if c was closed.
func (c *winConn) take() (windows.Handle, bool) {
	if c.closed.Swap(true) {
		return windows.InvalidHandle, false
	}
	hub.kick(&c.rd.w)
	hub.kick(&c.wr.w)
	c.own = false
	return c.s, true
}

// CloseWrite shuts the sending side down.
func (c *winConn) CloseWrite() error { return windows.Shutdown(c.s, windows.SHUT_WR) }

// CloseRead shuts the receiving side down.
func (c *winConn) CloseRead() error { return windows.Shutdown(c.s, windows.SHUT_RD) }

func (c *winConn) LocalAddr() net.Addr  { return c.laddr }
func (c *winConn) RemoteAddr() net.Addr { return c.raddr }

func (c *winConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *winConn) SetReadDeadline(t time.Time) error  { c.rd.setDeadline(t); return nil }
func (c *winConn) SetWriteDeadline(t time.Time) error { c.wr.setDeadline(t); return nil }

// nanos is t in Unix nanoseconds, 0 for the zero time (no deadline).
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixNano(), 1)
}

// SyscallConn gives the socket, for DupConn and the net backend's wait
// for readability.
func (c *winConn) SyscallConn() (syscall.RawConn, error) {
	return winRaw{c.s, &c.closed, &c.rd, &c.wr}, nil
}

// winRaw is a socket's syscall.RawConn.
type winRaw struct {
	s      windows.Handle
	closed *atomic.Bool
	rd, wr *side
}

func (r winRaw) Control(f func(fd uintptr)) error {
	if r.closed.Load() {
		return net.ErrClosed
	}
	f(uintptr(r.s))
	return nil
}

func (r winRaw) Read(f func(fd uintptr) bool) error  { return r.loop(f, r.rd, true) }
func (r winRaw) Write(f func(fd uintptr) bool) error { return r.loop(f, r.wr, false) }

// loop calls f until it reports done, waiting between calls until the
// socket is ready. For reading, a peek decides after every wake: a kick
// (a deadline set, a Close) is no readiness, and a receiving side shut
// is, which WSAPoll does not report.
func (r winRaw) loop(f func(fd uintptr) bool, sd *side, in bool) error {
	for {
		if r.closed.Load() {
			return net.ErrClosed
		}
		if f(uintptr(r.s)) {
			return nil
		}
		for {
			ready, err := sd.wait(r.closed)
			if err != nil {
				return err
			}
			if in && sockPeek(r.s) || !in && ready {
				break
			}
		}
	}
}

// winListener is a net.Listener over a listening socket: a view of the
// caller's, for the net backend. Its Accept waits for the poll hub.
type winListener struct {
	s      windows.Handle
	own    bool // Close closes s
	closed atomic.Bool
	acc    side
	addr   net.Addr
}

func newWinListener(s windows.Handle, own bool) *winListener {
	l := &winListener{s: s, own: own}
	l.acc.w = newPollWaiter(s, true)
	if sa, err := windows.Getsockname(s); err == nil {
		l.addr = tcpAddr(sa)
	}
	return l
}

func (l *winListener) Accept() (net.Conn, error) {
	for {
		if l.closed.Load() {
			return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: net.ErrClosed}
		}
		ns, e := sockAccept(l.s)
		switch {
		case e == 0:
			return newWinConn(ns, true), nil
		case e != syscall.EAGAIN:
			return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: os.NewSyscallError("accept", e)}
		}
		if _, err := l.acc.wait(&l.closed); err != nil {
			return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: err}
		}
	}
}

func (l *winListener) Close() error {
	if l.closed.Swap(true) {
		return net.ErrClosed
	}
	hub.kick(&l.acc.w)
	if !l.own {
		return nil
	}
	return windows.Closesocket(l.s)
}

func (l *winListener) Addr() net.Addr { return l.addr }

// SetDeadline bounds Accept.
func (l *winListener) SetDeadline(t time.Time) error { l.acc.setDeadline(t); return nil }

func (l *winListener) SyscallConn() (syscall.RawConn, error) {
	return winRaw{l.s, &l.closed, &l.acc, &l.acc}, nil
}
