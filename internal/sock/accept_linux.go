package sock

import "golang.org/x/sys/unix"

// Accept wraps accept4(2): the new descriptor is non-blocking and
// close-on-exec from the start.
func Accept(fd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}
