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

// A blocking call on a socket waits for the poll hub in slices, so that a
// deadline set or a Close made meanwhile ends it within a slice: the
// first slice is short and each next one twice as long, up to maxSlice,
// so that an idle connection's goroutine wakes ten times a second, not
// fifty.
const (
	firstSlice = 1   // milliseconds
	maxSlice   = 100 // milliseconds
)

// winConn is a net.Conn over a socket, for the net backend's blocking
// calls (a view of the caller's socket, which it does not own) and for
// FileConn (a duplicate of its own). Its calls wait for the poll hub in
// slices, so deadlines and Close end them; safe for concurrent use as a
// net.Conn is.
type winConn struct {
	s            windows.Handle
	own          bool // Close closes s
	closed       atomic.Bool
	rdl, wdl     atomic.Int64 // deadlines in Unix nanoseconds; 0: none
	laddr, raddr net.Addr
}

// newWinConn wraps socket s; with own, it owns s from now on.
func newWinConn(s windows.Handle, own bool) *winConn {
	c := &winConn{s: s, own: own}
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

// wait parks until s is ready (in: readable), one slice passes, the
// deadline in dl passes, or the conn closes, and reports whether s was
// ready; *slice is the slice in milliseconds, doubled for the next wait
// up to maxSlice. The caller retries its call after every slice:
// Windows' shutdown(SD_RECEIVE) does not make a socket readable, but the
// recv that follows it fails.
func wait(s windows.Handle, closed *atomic.Bool, in bool, dl *atomic.Int64, slice *int) (bool, error) {
	if closed.Load() {
		return false, net.ErrClosed
	}
	ms := max(*slice, firstSlice)
	*slice = min(2*ms, maxSlice)
	if d := dl.Load(); d != 0 {
		left := time.Until(time.Unix(0, d))
		if left <= 0 {
			return false, os.ErrDeadlineExceeded
		}
		ms = min(ms, int(left/time.Millisecond)+1)
	}
	return hubWait(s, in, time.Duration(ms)*time.Millisecond)
}

func (c *winConn) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.laddr, Addr: c.raddr, Err: err}
}

func (c *winConn) Read(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, c.opError("read", net.ErrClosed)
	}
	for slice := 0; ; {
		n, e := sockRead(c.s, p)
		switch {
		case e == 0 && n == 0 && len(p) > 0:
			return 0, io.EOF
		case e == 0:
			return n, nil
		case e != syscall.EAGAIN:
			return 0, c.opError("read", os.NewSyscallError("recv", e))
		}
		if _, err := wait(c.s, &c.closed, true, &c.rdl, &slice); err != nil {
			return 0, c.opError("read", err)
		}
	}
}

func (c *winConn) Write(p []byte) (int, error) {
	if c.closed.Load() {
		return 0, c.opError("write", net.ErrClosed)
	}
	done := 0
	for slice := 0; done < len(p); {
		n, e := sockWrite(c.s, p[done:])
		done += n
		switch {
		case e == 0:
			continue
		case e != syscall.EAGAIN:
			return done, c.opError("write", os.NewSyscallError("send", e))
		}
		if _, err := wait(c.s, &c.closed, false, &c.wdl, &slice); err != nil {
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
	hub.dropSocket(c.s)
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
	hub.dropSocket(c.s)
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

func (c *winConn) SetReadDeadline(t time.Time) error  { c.rdl.Store(nanos(t)); return nil }
func (c *winConn) SetWriteDeadline(t time.Time) error { c.wdl.Store(nanos(t)); return nil }

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
	return winRaw{c.s, &c.closed, &c.rdl, &c.wdl}, nil
}

// winRaw is a socket's syscall.RawConn.
type winRaw struct {
	s        windows.Handle
	closed   *atomic.Bool
	rdl, wdl *atomic.Int64
}

func (r winRaw) Control(f func(fd uintptr)) error {
	if r.closed.Load() {
		return net.ErrClosed
	}
	f(uintptr(r.s))
	return nil
}

func (r winRaw) Read(f func(fd uintptr) bool) error  { return r.loop(f, true, r.rdl) }
func (r winRaw) Write(f func(fd uintptr) bool) error { return r.loop(f, false, r.wdl) }

// loop calls f until it reports done, waiting between calls until the
// socket is ready: a slice that passes without readiness is not, unless
// a peek finds the receiving side shut (which WSAPoll does not report).
func (r winRaw) loop(f func(fd uintptr) bool, in bool, dl *atomic.Int64) error {
	for slice := 0; !f(uintptr(r.s)); {
		for {
			ready, err := wait(r.s, r.closed, in, dl, &slice)
			if err != nil {
				return err
			}
			if ready || in && sockPeek(r.s) {
				break
			}
		}
	}
	return nil
}

// winListener is a net.Listener over a listening socket of its own.
type winListener struct {
	s      windows.Handle
	own    bool // Close closes s
	closed atomic.Bool
	dl     atomic.Int64
	addr   net.Addr
}

func newWinListener(s windows.Handle, own bool) *winListener {
	l := &winListener{s: s, own: own}
	if sa, err := windows.Getsockname(s); err == nil {
		l.addr = tcpAddr(sa)
	}
	return l
}

func (l *winListener) Accept() (net.Conn, error) {
	for slice := 0; ; {
		ns, e := sockAccept(l.s)
		switch {
		case e == 0:
			return newWinConn(ns, true), nil
		case e != syscall.EAGAIN:
			return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: os.NewSyscallError("accept", e)}
		}
		if _, err := wait(l.s, &l.closed, true, &l.dl, &slice); err != nil {
			return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.addr, Err: err}
		}
	}
}

func (l *winListener) Close() error {
	if l.closed.Swap(true) {
		return net.ErrClosed
	}
	hub.dropSocket(l.s)
	if !l.own {
		return nil
	}
	return windows.Closesocket(l.s)
}

func (l *winListener) Addr() net.Addr { return l.addr }

// SetDeadline bounds Accept.
func (l *winListener) SetDeadline(t time.Time) error { l.dl.Store(nanos(t)); return nil }

func (l *winListener) SyscallConn() (syscall.RawConn, error) {
	var wdl atomic.Int64
	return winRaw{l.s, &l.closed, &l.dl, &wdl}, nil
}
