//go:build !unix && !windows

package sock

import (
	"net"
	"syscall"
	"time"
)

// How Shutdown shuts a socket down.
const (
	ShutRead  = 0
	ShutWrite = 1
)

// The events Poll waits for.
const (
	PollIn  int16 = 1
	PollOut int16 = 4
)

// Shutdown shuts down one direction of fd's connection (its CloseRead or
// CloseWrite).
func Shutdown(fd, how int) error {
	o, ok := get(fd)
	if !ok {
		return syscall.EBADF
	}
	switch c := o.v.(type) {
	case interface{ CloseWrite() error }:
		if how == ShutWrite {
			return c.CloseWrite()
		}
		if r, ok := o.v.(interface{ CloseRead() error }); ok {
			return r.CloseRead()
		}
	}
	return syscall.ENOTCONN
}

// Getsockname returns fd's local address.
func Getsockname(fd int) (Sockaddr, error) {
	o, ok := get(fd)
	if !ok {
		return nil, syscall.EBADF
	}
	switch v := o.v.(type) {
	case net.Conn:
		return v.LocalAddr(), nil
	case net.Listener:
		return v.Addr(), nil
	case net.PacketConn:
		return v.LocalAddr(), nil
	}
	return nil, syscall.ENOTSOCK
}

// Recvfrom has nothing to take without waiting: the caller waits on its
// loop, whose backend receives.
func Recvfrom(fd int, p []byte) (int, Sockaddr, error) { return 0, nil, syscall.EAGAIN }

// Sendto sends a datagram on fd's socket to to.
func Sendto(fd int, p []byte, to Sockaddr) error {
	o, ok := get(fd)
	if !ok {
		return syscall.EBADF
	}
	pc, ok := o.v.(net.PacketConn)
	if !ok {
		return syscall.ENOTSOCK
	}
	var err error
	if to == nil {
		_, err = pc.(net.Conn).Write(p)
	} else {
		_, err = pc.WriteTo(p, to)
	}
	return err
}

// Poll reports a socket writable at once; for input it waits msec and
// reports it readable, for the caller to try (package net's objects have
// no readiness to ask).
func Poll(fd int, events int16, msec int) error {
	if _, ok := get(fd); !ok {
		return syscall.EBADF
	}
	if events&PollOut == 0 && msec > 0 {
		time.Sleep(time.Duration(msec) * time.Millisecond)
	}
	return nil
}
