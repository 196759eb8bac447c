//go:build unix

package sock

import "golang.org/x/sys/unix"

// How Shutdown shuts a socket down, shutdown(2).
const (
	ShutRead  = unix.SHUT_RD
	ShutWrite = unix.SHUT_WR
)

// The events Poll waits for, poll(2).
const (
	PollIn  int16 = unix.POLLIN
	PollOut int16 = unix.POLLOUT
)

// Shutdown wraps shutdown(2); how is ShutRead or ShutWrite.
func Shutdown(fd, how int) error { return unix.Shutdown(fd, how) }

// Getsockname wraps getsockname(2): fd's local address.
func Getsockname(fd int) (Sockaddr, error) { return unix.Getsockname(fd) }

// Recvfrom wraps recvfrom(2) without flags: one datagram into p, and its
// source. EINTR and EAGAIN are returned, for the caller to handle.
func Recvfrom(fd int, p []byte) (int, Sockaddr, error) { return unix.Recvfrom(fd, p, 0) }

// Sendto wraps sendto(2) without flags: p as one datagram to to, or to a
// connected socket's peer when to is nil.
func Sendto(fd int, p []byte, to Sockaddr) error { return unix.Sendto(fd, p, 0, to) }

// Poll wraps poll(2) on the one descriptor fd: it waits at most msec
// milliseconds, on the calling thread, for events (PollIn, PollOut). EINTR
// is returned, for the caller to retry.
func Poll(fd int, events int16, msec int) error {
	_, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: events}}, msec)
	return err
}
