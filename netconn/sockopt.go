package netconn

import (
	"net"
	"os"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/sock"
)

// CloseRead shuts down the reading side (shutdown(2), SHUT_RD): a Read
// blocked now or later returns io.EOF once what was received is read.
func (c *Conn) CloseRead() error { return c.shutdown(sock.ShutRead) }

// CloseWrite shuts down the writing side once a Write in progress
// returned (shutdown(2), SHUT_WR): the peer reads an end of file; later
// Writes fail.
func (c *Conn) CloseWrite() error {
	c.wr.serial.Lock()
	defer c.wr.serial.Unlock()
	return c.shutdown(sock.ShutWrite)
}

func (c *Conn) shutdown(how int) error {
	fd, ok := c.fd.Acquire()
	if !ok {
		return c.opError("shutdown", net.ErrClosed)
	}
	defer c.fd.Release()
	if err := sock.Shutdown(fd, how); err != nil {
		return c.opError("shutdown", os.NewSyscallError("shutdown", err))
	}
	return nil
}

// SetNoDelay controls Nagle's algorithm (TCP_NODELAY); accepted and
// dialed TCP conns start with it off (no delay), as in package net.
func (c *Conn) SetNoDelay(noDelay bool) error {
	return c.setopt(sock.NoDelay, boolInt(noDelay))
}

// SetKeepAlive turns TCP keep-alive probes on or off.
func (c *Conn) SetKeepAlive(keepalive bool) error {
	return c.setopt(sock.KeepAlive, boolInt(keepalive))
}

// SetKeepAlivePeriod sets the idle time before the first probe and
// between probes, as *net.TCPConn's.
func (c *Conn) SetKeepAlivePeriod(d time.Duration) error {
	fd, ok := c.fd.Acquire()
	if !ok {
		return c.opError("set", net.ErrClosed)
	}
	defer c.fd.Release()
	if err := sock.SetKeepAlive(fd, d); err != nil {
		return c.opError("set", err)
	}
	return nil
}

// SetLinger sets SO_LINGER, as *net.TCPConn's: sec < 0 is the default
// (Close returns at once, the kernel sends what is left), 0 discards
// unsent data and resets the connection on Close.
func (c *Conn) SetLinger(sec int) error {
	fd, ok := c.fd.Acquire()
	if !ok {
		return c.opError("set", net.ErrClosed)
	}
	defer c.fd.Release()
	if err := sock.SetLinger(fd, sec); err != nil {
		return c.opError("set", os.NewSyscallError("setsockopt", err))
	}
	return nil
}

// SetReadBuffer sets the socket's receive buffer (SO_RCVBUF).
func (c *Conn) SetReadBuffer(n int) error { return c.setopt(sock.RcvBuf, n) }

// SetWriteBuffer sets the socket's send buffer (SO_SNDBUF).
func (c *Conn) SetWriteBuffer(n int) error { return c.setopt(sock.SndBuf, n) }

func (c *Conn) setopt(o sock.Opt, v int) error {
	if err := setInt(&c.fd, o, v); err != nil {
		return c.opError("set", err)
	}
	return nil
}

func setInt(f *sock.FD, o sock.Opt, v int) error {
	fd, ok := f.Acquire()
	if !ok {
		return net.ErrClosed
	}
	defer f.Release()
	return os.NewSyscallError("setsockopt", sock.SetsockoptInt(fd, o, v))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// SyscallConn returns the raw socket. Its Read and Write wait for
// readiness in poll(2) on the calling thread, between calls of f that
// report not done.
func (c *Conn) SyscallConn() (syscall.RawConn, error) { return rawConn{&c.fd}, nil }

// File returns a duplicate of the socket as an *os.File, as
// *net.TCPConn's: closing either leaves the other open.
func (c *Conn) File() (*os.File, error) {
	fd, ok := c.fd.Acquire()
	if !ok {
		return nil, c.opError("file", net.ErrClosed)
	}
	defer c.fd.Release()
	nfd, err := sock.Dup(fd)
	if err != nil {
		return nil, c.opError("file", err)
	}
	return os.NewFile(uintptr(nfd), "netconn"), nil
}

// rawConn is a syscall.RawConn over a sock.FD.
type rawConn struct{ fd *sock.FD }

func (rc rawConn) Control(f func(fd uintptr)) error {
	fd, ok := rc.fd.Acquire()
	if !ok {
		return net.ErrClosed
	}
	defer rc.fd.Release()
	f(uintptr(fd))
	return nil
}

func (rc rawConn) Read(f func(fd uintptr) bool) error { return rc.wait(f, sock.PollIn) }

func (rc rawConn) Write(f func(fd uintptr) bool) error { return rc.wait(f, sock.PollOut) }

func (rc rawConn) wait(f func(fd uintptr) bool, events int16) error {
	for {
		fd, ok := rc.fd.Acquire()
		if !ok {
			return net.ErrClosed
		}
		if f(uintptr(fd)) {
			rc.fd.Release()
			return nil
		}
		err := sock.Poll(fd, events, 10)
		rc.fd.Release()
		if err != nil && err != syscall.EINTR {
			return os.NewSyscallError("poll", err)
		}
	}
}
