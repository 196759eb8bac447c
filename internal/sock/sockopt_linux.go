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
