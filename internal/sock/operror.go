package sock

import (
	"net"
	"os"
	"syscall"
)

// OpError wraps a failure of op on a connection once, the way package net
// does: a *net.OpError around an *os.SyscallError around the errno (an
// error that is no errno is wrapped as it is). aio and engine report
// every system call failure through it.
func OpError(op, network string, source, addr net.Addr, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: network, Source: source, Addr: addr, Err: err}
}
