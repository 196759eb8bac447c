//go:build !unix && !windows

package sock

import (
	"net"
	"syscall"
	"time"
)

// SetsockoptInt sets option o of fd's connection through package net:
// NoDelay, RcvBuf and SndBuf; ReusePort and a socket that is no TCP
// connection fail with an error matching errors.ErrUnsupported.
func SetsockoptInt(fd int, o Opt, v int) error {
	if o == ReusePort {
		return errUnsupported // no SO_REUSEPORT: Windows' SO_REUSEADDR lets a socket steal a port
	}
	obj, ok := get(fd)
	if !ok {
		return syscall.EBADF
	}
	switch c := obj.v.(type) {
	case *net.TCPConn:
		switch o {
		case NoDelay:
			return c.SetNoDelay(v != 0)
		case RcvBuf:
			return c.SetReadBuffer(v)
		case SndBuf:
			return c.SetWriteBuffer(v)
		}
	case *net.UDPConn:
		switch o {
		case RcvBuf:
			return c.SetReadBuffer(v)
		case SndBuf:
			return c.SetWriteBuffer(v)
		}
	}
	return errUnsupported
}

// SetLinger sets fd's SO_LINGER (its TCPConn.SetLinger).
func SetLinger(fd, sec int) error {
	obj, ok := get(fd)
	if !ok {
		return syscall.EBADF
	}
	if c, ok := obj.v.(*net.TCPConn); ok {
		return c.SetLinger(sec)
	}
	return errUnsupported
}

// SetKeepAlive turns TCP keep-alive on with period d, or off if d <= 0.
func SetKeepAlive(fd int, d time.Duration) error {
	obj, ok := get(fd)
	if !ok {
		return syscall.EBADF
	}
	c, ok := obj.v.(*net.TCPConn)
	if !ok {
		return errUnsupported
	}
	if d <= 0 {
		return c.SetKeepAlive(false)
	}
	return c.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: d, Interval: d})
}

// SetLingerZero makes fd's close reset the connection, best effort.
func SetLingerZero(fd int) { SetLinger(fd, 0) }

// Unread reports that it does not know how many bytes wait unread.
func Unread(fd int) (int, bool) { return 0, false }

// Unacked reports that it does not know what the peer has not taken.
func Unacked(fd int) (int, bool) { return 0, false }
