package sock

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Read wraps read(2) on a non-blocking descriptor. EINTR is retried; any
// other failure, EAGAIN included, is returned as the raw errno with n == 0.
// It uses RawSyscall: a read on a non-blocking socket never sleeps, so the
// scheduler's system-call bookkeeping would be pure overhead. A failure a
// test injected (Fault) takes the place of the call.
func Read(fd int, p []byte) (int, syscall.Errno) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	for {
		n, e := uintptr(0), Fault(FaultRead, fd)
		if e == 0 {
			n, _, e = syscall.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(ptr), uintptr(len(p)))
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), 0
	}
}

// Write wraps write(2) on a non-blocking descriptor, like Read.
func Write(fd int, p []byte) (int, syscall.Errno) {
	var ptr unsafe.Pointer
	if len(p) > 0 {
		ptr = unsafe.Pointer(&p[0])
	}
	for {
		n, e := uintptr(0), Fault(FaultWrite, fd)
		if e == 0 {
			n, _, e = syscall.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(ptr), uintptr(len(p)))
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), 0
	}
}

// Writev wraps writev(2) on a non-blocking descriptor, like Write. iov must
// point at memory that stays reachable for the duration of the call, which
// the caller guarantees by holding the slices it was built from.
func Writev(fd int, iov []unix.Iovec) (int, syscall.Errno) {
	if len(iov) == 0 {
		return 0, 0
	}
	for {
		n, e := uintptr(0), Fault(FaultWrite, fd)
		if e == 0 {
			n, _, e = syscall.RawSyscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		}
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), 0
	}
}
