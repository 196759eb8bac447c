//go:build !windows

package poller

import "syscall"

// portableErrno returns en: package net reports the system's own errnos.
func portableErrno(en syscall.Errno) syscall.Errno { return en }
