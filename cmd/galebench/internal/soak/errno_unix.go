//go:build unix

package soak

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// errnoName returns e's symbolic name, such as "ECONNRESET", or "".
func errnoName(e syscall.Errno) string { return unix.ErrnoName(e) }
