//go:build !unix && !windows

package sock

import "syscall"

// Read has nothing to take without waiting (EAGAIN): package net's
// objects read only by waiting, which the loop's backend does.
func Read(fd int, p []byte) (int, syscall.Errno) { return 0, syscall.EAGAIN }

// Write cannot write without waiting (EAGAIN): the loop's backend does.
func Write(fd int, p []byte) (int, syscall.Errno) { return 0, syscall.EAGAIN }

// Writev cannot write without waiting (EAGAIN): the loop's backend does.
func Writev(fd int, iov []Iovec) (int, syscall.Errno) { return 0, syscall.EAGAIN }
