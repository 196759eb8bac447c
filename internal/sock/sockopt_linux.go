package sock

import (
	"time"

	"golang.org/x/sys/unix"
)

// keepAliveParams are the keep-alive timings, tcp(7).
type keepAliveParams struct{ idle, intvl, cnt int }

func saveKeepAlive(fd int) keepAliveParams {
	var k keepAliveParams
	k.idle, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
	k.intvl, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL)
	k.cnt, _ = unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT)
	return k
}

func (k keepAliveParams) restore(fd int) error {
	if k.idle <= 0 || k.intvl <= 0 || k.cnt <= 0 {
		return nil
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, k.idle); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, k.intvl); err != nil {
		return err
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPCNT, k.cnt)
}

// SetKeepAlive turns TCP keep-alive on with d as both the idle time and
// the probe interval (as package net does), or off when d is negative.
func SetKeepAlive(fd int, d time.Duration) error {
	if d < 0 {
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 0)
	}
	secs := max(int((d+time.Second-1)/time.Second), 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs)
}

// Unread returns how many bytes wait unread in the receive queue of the
// stream socket fd (ioctl SIOCINQ, tcp(7) and unix(7)), and whether the
// kernel said: a close(2) with bytes unread resets the connection
// instead of ending it (RFC 2525 §2.17).
func Unread(fd int) (int, bool) {
	n, err := unix.IoctlGetInt(fd, unix.SIOCINQ)
	return n, err == nil
}

// Unacked returns how many bytes written to the stream socket fd its
// peer has not taken yet (ioctl SIOCOUTQ): on TCP, sent or not, not yet
// acknowledged, which a reset discards; on a Unix socket, not yet read.
// ok is whether the kernel said.
func Unacked(fd int) (n int, ok bool) {
	n, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
	return n, err == nil
}
