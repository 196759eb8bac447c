//go:build !unix

package sock

import "time"

// SetsockoptInt fails with an error matching errors.ErrUnsupported.
func SetsockoptInt(fd int, o Opt, v int) error { return errUnsupported }

// SetLinger fails with an error matching errors.ErrUnsupported.
func SetLinger(fd, sec int) error { return errUnsupported }

// SetKeepAlive fails with an error matching errors.ErrUnsupported.
func SetKeepAlive(fd int, d time.Duration) error { return errUnsupported }

// SetLingerZero does nothing: it is best effort, and there is no socket
// here to set.
func SetLingerZero(fd int) {}

// Unread reports that it does not know how many bytes wait unread.
func Unread(fd int) (int, bool) { return 0, false }

// Unacked reports that it does not know what the peer has not taken.
func Unacked(fd int) (int, bool) { return 0, false }
