package sock

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// applySystem sets o's Linux options on fd.
func (o ListenOpts) applySystem(fd int, tcp bool) error {
	if o.BindToDevice != "" {
		if err := unix.BindToDevice(fd, o.BindToDevice); err != nil {
			return fmt.Errorf("SO_BINDTODEVICE %q: %w", o.BindToDevice, err)
		}
	}
	if !tcp {
		return nil
	}
	if o.DeferAccept > 0 {
		secs := int((o.DeferAccept + time.Second - 1) / time.Second)
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, secs); err != nil {
			return fmt.Errorf("TCP_DEFER_ACCEPT: %w", err)
		}
	}
	if o.FastOpen > 0 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_FASTOPEN, o.FastOpen); err != nil {
			return fmt.Errorf("TCP_FASTOPEN: %w", err)
		}
	}
	return nil
}

// Relisten sets the backlog of fd, a listening socket (listen(2) again).
func Relisten(fd, backlog int) error { return unix.Listen(fd, backlog) }
