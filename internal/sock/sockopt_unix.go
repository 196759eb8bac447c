//go:build unix

package sock

import "golang.org/x/sys/unix"

// TCPOptions are the options of a TCP socket that net.FileConn resets to
// the standard library's defaults, saved so they can be put back.
type TCPOptions struct {
	tcp       bool
	noDelay   int
	keepAlive int
	keep      keepAliveParams
}

// SaveTCPOptions reads fd's TCP options. For a socket that is not TCP it
// returns options whose Restore does nothing.
func SaveTCPOptions(fd int) TCPOptions {
	nd, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	if err != nil {
		return TCPOptions{}
	}
	ka, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	return TCPOptions{tcp: true, noDelay: nd, keepAlive: ka, keep: saveKeepAlive(fd)}
}

// Restore sets the saved options on fd.
func (o TCPOptions) Restore(fd int) error {
	if !o.tcp {
		return nil
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, o.noDelay); err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, o.keepAlive); err != nil {
		return err
	}
	return o.keep.restore(fd)
}

// SetLingerZero makes close(2) of fd reset the connection (SO_LINGER on,
// zero seconds): the kernel drops what is still queued to send and the
// peer sees a reset instead of an end of file that would pass a cut-off
// stream for a whole one. Best effort: sockets without linger ignore it.
func SetLingerZero(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
}

// optNames maps an Opt to its level and name for setsockopt(2).
var optNames = [...]struct{ level, name int }{
	NoDelay:   {unix.IPPROTO_TCP, unix.TCP_NODELAY},
	KeepAlive: {unix.SOL_SOCKET, unix.SO_KEEPALIVE},
	RcvBuf:    {unix.SOL_SOCKET, unix.SO_RCVBUF},
	SndBuf:    {unix.SOL_SOCKET, unix.SO_SNDBUF},
	ReusePort: {unix.SOL_SOCKET, unix.SO_REUSEPORT},
}

// SetsockoptInt wraps setsockopt(2) for the integer option o.
func SetsockoptInt(fd int, o Opt, v int) error {
	n := optNames[o]
	return unix.SetsockoptInt(fd, n.level, n.name, v)
}

// SetLinger sets SO_LINGER (socket(7)) to sec seconds, or turns it off
// when sec is negative.
func SetLinger(fd, sec int) error {
	l := &unix.Linger{}
	if sec >= 0 {
		l.Onoff, l.Linger = 1, int32(sec)
	}
	return unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, l)
}
