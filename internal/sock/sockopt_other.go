//go:build unix && !linux

package sock

import (
	"time"

	"golang.org/x/sys/unix"
)

// keepAliveParams would hold the keep-alive timings; the portable x/sys
// API names them differently per BSD, so they are left as net sets them.
type keepAliveParams struct{}

func saveKeepAlive(fd int) keepAliveParams { return keepAliveParams{} }

func (keepAliveParams) restore(fd int) error { return nil }

// SetKeepAlive turns TCP keep-alive on, or off when d is negative. The
// timings are left to the system: their option names differ per BSD.
func SetKeepAlive(fd int, d time.Duration) error {
	on := 1
	if d < 0 {
		on = 0
	}
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, on)
}

// Unread would return the bytes waiting unread in fd's receive queue;
// x/sys names no FIONREAD here, so it reports that it does not know.
func Unread(fd int) (int, bool) { return 0, false }

// Unacked would return the bytes written to fd its peer has not taken
// yet; it reports that it does not know.
func Unacked(fd int) (int, bool) { return 0, false }
