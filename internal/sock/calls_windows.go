package sock

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// On Windows a descriptor is a SOCKET of gale's own: DupConn duplicates
// the caller's with WSADuplicateSocket, as dup(2) does on Unix, and the
// calls below are Winsock's on it, non-blocking (EAGAIN for
// WSAEWOULDBLOCK). The net backend waits on its own duplicates through
// winConn and winListener.

// errDatagram is Wrap's error for a datagram socket, which the net
// backend does not serve on Windows.
var errDatagram = fmt.Errorf("sock: datagram sockets are not served on windows: %w", errors.ErrUnsupported)

// ErrNoSyscallConn reports a connection that does not expose its socket
// through syscall.Conn (a *tls.Conn, a net.Pipe end).
var ErrNoSyscallConn = errors.New("connection does not implement syscall.Conn")

// How Shutdown shuts a socket down.
const (
	ShutRead  = windows.SHUT_RD
	ShutWrite = windows.SHUT_WR
)

// The events Poll waits for.
const (
	PollIn  int16 = 1
	PollOut int16 = 4
)

// DupConn returns a non-blocking, non-inherited duplicate of the socket
// behind c; c stays the caller's (Release closes it).
func DupConn(c syscall.Conn) (int, error) {
	if c == nil {
		return -1, ErrNoSyscallConn
	}
	s, err := dupSocket(c)
	if err != nil {
		return -1, err
	}
	return int(s), nil
}

// Release ends the caller's use of what it gave DupConn: it closes it,
// whose duplicate stays open.
func Release(c io.Closer) { c.Close() }

// Dup duplicates socket fd.
func Dup(fd int) (int, error) {
	s, err := dupHandle(windows.Handle(fd))
	if err != nil {
		return -1, err
	}
	return int(s), nil
}

// Close closes socket fd.
func Close(fd int) error { return windows.Closesocket(windows.Handle(fd)) }

// FileConn returns a net.Conn of its own for socket fd (a duplicate);
// fd stays the caller's.
func FileConn(fd int) (net.Conn, error) {
	nfd, err := Dup(fd)
	if err != nil {
		return nil, err
	}
	return newWinConn(windows.Handle(nfd), true), nil
}

// Wrap returns a view of socket fd as package net's types, a listener if
// it listens, a connection otherwise, for the net backend. fd stays the
// caller's: the view's Close ends the calls waiting on it but leaves fd
// open, and the caller closes fd once they have returned.
func Wrap(fd int) (any, error) {
	s := windows.Handle(fd)
	if !IsStream(fd) {
		return nil, errDatagram
	}
	if v, err := windows.GetsockoptInt(s, windows.SOL_SOCKET, soAcceptConn); err == nil && v != 0 {
		return newWinListener(s, false), nil
	}
	return newWinConn(s, false), nil
}

// TakeConn returns the socket of c, a connection a view of Wrap's
// accepted, and closes c without closing the socket, which is the
// caller's from now on. It reports false for any other c.
func TakeConn(c net.Conn) (int, bool) {
	wc, ok := c.(*winConn)
	if !ok || !wc.own {
		return -1, false
	}
	s, ok := wc.take()
	return int(s), ok
}

const (
	soAcceptConn = 0x0002 // SO_ACCEPTCONN
	soType       = 0x1008 // SO_TYPE
)

// IsStream reports whether socket fd is a stream socket.
func IsStream(fd int) bool {
	v, err := windows.GetsockoptInt(windows.Handle(fd), windows.SOL_SOCKET, soType)
	return err != nil || v == windows.SOCK_STREAM
}

// Read is a non-blocking recv.
func Read(fd int, p []byte) (int, syscall.Errno) { return sockRead(windows.Handle(fd), p) }

// Write is a non-blocking send.
func Write(fd int, p []byte) (int, syscall.Errno) { return sockWrite(windows.Handle(fd), p) }

// Writev sends the buffers of iov in order, as far as the socket takes
// them without waiting: one WSASend gathers them, as writev(2) does.
func Writev(fd int, iov []Iovec) (int, syscall.Errno) {
	var bufs [maxWSABufs]windows.WSABuf
	n := 0
	for _, v := range iov {
		if v.Len == 0 {
			continue
		}
		if n == len(bufs) {
			break // the rest goes with the next call, as with IOV_MAX
		}
		bufs[n] = windows.WSABuf{Len: uint32(min(v.Len, 1<<30)), Buf: v.Base}
		n++
	}
	if n == 0 {
		return 0, 0
	}
	var sent uint32
	if err := windows.WSASend(windows.Handle(fd), &bufs[0], uint32(n), &sent, 0, nil, nil); err != nil {
		return 0, winErrno(err)
	}
	return int(sent), 0
}

// maxWSABufs bounds the buffers one Writev sends.
const maxWSABufs = 64

// Shutdown shuts down one direction of socket fd.
func Shutdown(fd, how int) error { return windows.Shutdown(windows.Handle(fd), how) }

// Getsockname returns socket fd's local address.
func Getsockname(fd int) (Sockaddr, error) {
	sa, err := windows.Getsockname(windows.Handle(fd))
	if err != nil {
		return nil, err
	}
	return tcpAddr(sa), nil
}

// Recvfrom is not available on Windows sockets yet: datagrams stay with
// the object table's net backend elsewhere.
func Recvfrom(fd int, p []byte) (int, Sockaddr, error) { return 0, nil, errUnsupported }

// Sendto is not available on Windows sockets yet.
func Sendto(fd int, p []byte, to Sockaddr) error { return errUnsupported }

// Poll waits up to msec for socket fd to be readable (PollIn) or
// writable.
func Poll(fd int, events int16, msec int) error {
	_, err := sockPoll(windows.Handle(fd), events&PollIn != 0, msec)
	return err
}

// AcceptPeer accepts a connection on listening socket fd without
// waiting (EAGAIN when none is there).
func AcceptPeer(fd int, rsa *RawSockaddrAny) (int, netip.AddrPort, Sockaddr, error) {
	ns, e := sockAccept(windows.Handle(fd))
	if e != 0 {
		return -1, netip.AddrPort{}, nil, e
	}
	var peer netip.AddrPort
	if sa, err := windows.Getpeername(ns); err == nil {
		if a, ok := tcpAddr(sa).(*net.TCPAddr); ok {
			peer = a.AddrPort()
		}
	}
	return int(ns), peer, nil, nil
}

// SetsockoptInt sets option o of socket fd.
func SetsockoptInt(fd int, o Opt, v int) error {
	s := windows.Handle(fd)
	switch o {
	case NoDelay:
		return windows.SetsockoptInt(s, windows.IPPROTO_TCP, windows.TCP_NODELAY, v)
	case RcvBuf:
		return windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_RCVBUF, v)
	case SndBuf:
		return windows.SetsockoptInt(s, windows.SOL_SOCKET, windows.SO_SNDBUF, v)
	}
	return errNoReusePort
}

// errNoReusePort is SetsockoptInt's error for ReusePort: Windows has no
// SO_REUSEPORT (its SO_REUSEADDR lets a second socket steal the port).
var errNoReusePort = fmt.Errorf("sock: SO_REUSEPORT: no such option on windows: %w", errors.ErrUnsupported)

// SetLinger sets socket fd's SO_LINGER to sec seconds (negative: off).
func SetLinger(fd, sec int) error {
	l := windows.Linger{}
	if sec >= 0 {
		l.Onoff, l.Linger = 1, int32(sec)
	}
	return windows.SetsockoptLinger(windows.Handle(fd), windows.SOL_SOCKET, windows.SO_LINGER, &l)
}

// SetKeepAlive turns keep-alive on (d > 0) or off; Windows' default
// timings stay.
func SetKeepAlive(fd int, d time.Duration) error {
	on := 0
	if d > 0 {
		on = 1
	}
	return windows.SetsockoptInt(windows.Handle(fd), windows.SOL_SOCKET, windows.SO_KEEPALIVE, on)
}

// SetLingerZero makes fd's close reset the connection, best effort.
func SetLingerZero(fd int) { SetLinger(fd, 0) }

// Unread returns how many bytes socket fd holds unread (FIONREAD).
func Unread(fd int) (int, bool) { return sockUnread(windows.Handle(fd)) }

// Unacked returns how many bytes socket fd sent that its peer has not
// acknowledged, and false where the system does not say
// (WSAIoctl(SIO_TCP_INFO): Windows 10 1703 and later; not under Wine 8).
func Unacked(fd int) (int, bool) { return sockUnacked(windows.Handle(fd)) }

// Readable reports whether socket fd has input, an end or an error to
// read now.
func Readable(fd int) bool { return sockPeek(windows.Handle(fd)) }
