//go:build unix

package sock

import (
	"errors"
	"io"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoSyscallConn reports a connection that does not expose its descriptor
// through syscall.Conn (a *tls.Conn, a net.Pipe end).
var ErrNoSyscallConn = errors.New("connection does not implement syscall.Conn")

// DupConn duplicates the descriptor behind c. The copy is close-on-exec
// (F_DUPFD_CLOEXEC, fcntl(2)), so child processes never inherit it, and
// non-blocking. It shares the open file description with c, so socket
// options set on c stay in force. c itself is left open and untouched.
func DupConn(c syscall.Conn) (fd int, err error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd = -1
	var dupErr error
	ctlErr := rc.Control(func(s uintptr) {
		fd, dupErr = Dup(int(s))
	})
	if ctlErr != nil {
		return -1, ctlErr
	}
	return fd, dupErr
}

// Release ends the caller's use of the connection, listener or datagram
// socket it gave DupConn: it closes c, whose duplicate stays open.
func Release(c io.Closer) { c.Close() }

// Dup wraps fcntl(fd, F_DUPFD_CLOEXEC, 0) and sets the copy non-blocking.
func Dup(fd int) (int, error) {
	nfd, err := ignoringEINTR(func() (int, error) {
		return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	})
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, err
	}
	return nfd, nil
}

// Close wraps close(2). EINTR is not retried: on Linux the descriptor is
// released even when close reports EINTR (close(2), "Dealing with error
// returns from close()").
func Close(fd int) error { return unix.Close(fd) }

// IsStream reports whether a zero-byte read on fd means end of file: true
// unless fd is a datagram (or sequenced-packet) socket, where it is an
// empty message.
func IsStream(fd int) bool {
	t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	return err != nil || t == unix.SOCK_STREAM
}

func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}
