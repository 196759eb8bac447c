//go:build !unix

package sock

import "syscall"

// Read fails with ENOSYS, which matches errors.ErrUnsupported.
func Read(fd int, p []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }

// Write fails with ENOSYS, which matches errors.ErrUnsupported.
func Write(fd int, p []byte) (int, syscall.Errno) { return 0, syscall.ENOSYS }

// Writev fails with ENOSYS, which matches errors.ErrUnsupported.
func Writev(fd int, iov []Iovec) (int, syscall.Errno) { return 0, syscall.ENOSYS }
