package restart_test

import "golang.org/x/sys/unix"

// fdCloexec reports whether fd is close-on-exec (fcntl(2), F_GETFD).
func fdCloexec(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	return err == nil && fl&unix.FD_CLOEXEC != 0
}
