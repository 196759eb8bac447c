//go:build !windows

package sock

import "syscall"

// PortableErrno returns en: the system's errnos are the ones the layers
// above test for.
func PortableErrno(en syscall.Errno) syscall.Errno { return en }
