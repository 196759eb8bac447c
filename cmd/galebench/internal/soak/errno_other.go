//go:build !unix

package soak

import "syscall"

// errnoName returns "": x/sys/unix, which knows the names, is Unix-only.
func errnoName(e syscall.Errno) string { return "" }
