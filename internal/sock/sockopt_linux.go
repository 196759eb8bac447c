package sock

import "golang.org/x/sys/unix"

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
