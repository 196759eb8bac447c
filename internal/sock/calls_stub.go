//go:build !unix

package sock

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

// Shutdown fails with an error matching errors.ErrUnsupported.
func Shutdown(fd, how int) error { return errUnsupported }

// Getsockname fails with an error matching errors.ErrUnsupported.
func Getsockname(fd int) (Sockaddr, error) { return nil, errUnsupported }

// Recvfrom fails with an error matching errors.ErrUnsupported.
func Recvfrom(fd int, p []byte) (int, Sockaddr, error) { return 0, nil, errUnsupported }

// Sendto fails with an error matching errors.ErrUnsupported.
func Sendto(fd int, p []byte, to Sockaddr) error { return errUnsupported }

// Poll fails with an error matching errors.ErrUnsupported.
func Poll(fd int, events int16, msec int) error { return errUnsupported }
