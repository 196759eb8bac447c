//go:build unix && !linux

package sock

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read wraps read(2) on a non-blocking descriptor. EINTR is retried; any
// other failure, EAGAIN included, is returned as the raw errno with n == 0.
func Read(fd int, p []byte) (int, syscall.Errno) {
	for {
		n, err := unix.Read(fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err.(syscall.Errno)
		}
		return n, 0
	}
}

// Write wraps write(2) on a non-blocking descriptor, like Read.
func Write(fd int, p []byte) (int, syscall.Errno) {
	for {
		n, err := unix.Write(fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err.(syscall.Errno)
		}
		return n, 0
	}
}

// Writev writes the buffers iov describes one write(2) at a time: the
// portable x/sys/unix API has no writev on these systems. It stops at the
// first short write, as writev(2) would.
func Writev(fd int, iov []unix.Iovec) (int, syscall.Errno) {
	total := 0
	for i := range iov {
		p := unsafe.Slice(iov[i].Base, iov[i].Len)
		n, e := Write(fd, p)
		total += n
		if e != 0 {
			if total > 0 {
				return total, 0
			}
			return 0, e
		}
		if n < len(p) {
			break
		}
	}
	return total, 0
}
