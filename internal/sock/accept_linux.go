package sock

import "golang.org/x/sys/unix"

// Accept wraps accept4(2): the new descriptor is non-blocking and
// close-on-exec from the start. A failure a test injected (Fault) takes
// the place of the call, so the connection stays in the backlog, as with
// a real EMFILE. EINTR is returned, like every other errno: the caller
// retries.
func Accept(fd int) (int, unix.Sockaddr, error) {
	if e := Fault(FaultAccept, fd); e != 0 {
		return -1, nil, e
	}
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}
