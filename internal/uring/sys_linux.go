package uring

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Hooks are the system interfaces a ring depends on. Tests replace them
// (Inject) to prove that every reason io_uring can be unusable leads to a
// clean fallback, and that a kernel refusing submissions loses none.
type Hooks struct {
	// Setup is io_uring_setup(2).
	Setup func(entries uint32, p unsafe.Pointer) (int, syscall.Errno)
	// Disabled returns the kernel.io_uring_disabled sysctl (0 where it
	// does not exist).
	Disabled func() int
	// Enter, when set, runs before each io_uring_enter(2) with the number
	// of entries the call is to submit. A non-zero errno is taken as the
	// call's result and the call is not made: the kernel neither consumes
	// an entry nor waits, as when it answers EAGAIN (no memory for the
	// requests) or EBUSY.
	Enter func(toSubmit uint32) syscall.Errno
}

var hooks = Hooks{Setup: rawSetup, Disabled: readDisabled}

// Inject replaces the non-nil hooks of h until the returned function is
// called. Tests only; not safe while rings are set up or entered on
// other goroutines.
func Inject(h Hooks) (restore func()) {
	old := hooks
	if h.Setup != nil {
		hooks.Setup = h.Setup
	}
	if h.Disabled != nil {
		hooks.Disabled = h.Disabled
	}
	if h.Enter != nil {
		hooks.Enter = h.Enter
	}
	return func() { hooks = old }
}

func rawSetup(entries uint32, p unsafe.Pointer) (int, syscall.Errno) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(p), 0)
	return int(fd), errno
}

// readDisabled reads /proc/sys/kernel/io_uring_disabled (Linux 6.6): 0
// allows io_uring, 1 allows it to members of kernel.io_uring_group, 2
// disables it.
func readDisabled() int {
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil {
		return 0
	}
	v, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return v
}

// enter is io_uring_enter(2), unless the Enter hook answers for it. The
// Go scheduler is told of the system call (Syscall6, not RawSyscall): it
// may block.
func enter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSz uintptr) (int, syscall.Errno) {
	if h := hooks.Enter; h != nil {
		if errno := h(toSubmit); errno != 0 {
			return 0, errno
		}
	}
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit),
		uintptr(minComplete), uintptr(flags), uintptr(arg), argSz)
	return int(n), errno
}

// register is io_uring_register(2).
func register(fd int, op uint32, arg unsafe.Pointer, nr uint32) (int, error) {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(op), uintptr(arg), uintptr(nr), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return 0, os.NewSyscallError("io_uring_register", errno)
		}
		return int(n), nil
	}
}

// mmap maps size bytes of the ring fd at offset off.
func mmap(fd int, off int64, size int) ([]byte, error) {
	b, err := unix.Mmap(fd, off, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}

// anon maps size bytes of private anonymous memory: memory the kernel
// reads and writes, outside the Go heap.
func anon(size int) ([]byte, error) {
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, os.NewSyscallError("mmap", err)
	}
	return b, nil
}
