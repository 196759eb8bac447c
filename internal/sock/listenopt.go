package sock

import (
	"fmt"
	"time"
)

// ListenOpts are the options of a listening socket set before it binds
// (engine.ListenConfig's): zero fields are left as the system has them.
type ListenOpts struct {
	RecvBuffer, SendBuffer int           // SO_RCVBUF, SO_SNDBUF
	DeferAccept            time.Duration // TCP_DEFER_ACCEPT (Linux)
	FastOpen               int           // TCP_FASTOPEN's queue (Linux)
	BindToDevice           string        // SO_BINDTODEVICE (Linux)
}

// Zero reports whether o sets nothing.
func (o ListenOpts) Zero() bool { return o == ListenOpts{} }

// Apply sets o on socket fd, a TCP one when tcp is set (the TCP options
// are skipped on another).
func (o ListenOpts) Apply(fd int, tcp bool) error {
	if o.RecvBuffer > 0 {
		if err := SetsockoptInt(fd, RcvBuf, o.RecvBuffer); err != nil {
			return fmt.Errorf("SO_RCVBUF: %w", err)
		}
	}
	if o.SendBuffer > 0 {
		if err := SetsockoptInt(fd, SndBuf, o.SendBuffer); err != nil {
			return fmt.Errorf("SO_SNDBUF: %w", err)
		}
	}
	return o.applySystem(fd, tcp)
}
