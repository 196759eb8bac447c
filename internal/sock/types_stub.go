//go:build !unix

package sock

import (
	"errors"
	"fmt"
	"net"
	"runtime"
)

// errUnsupported is the error of every call that needs a Unix socket API,
// which Windows and WebAssembly lack; it matches errors.ErrUnsupported.
// The calls that return a bare errno return syscall.ENOSYS instead, which
// matches it too.
var errUnsupported = fmt.Errorf("sock: no Unix socket calls on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// Sockaddr is a socket address: here the net.Addr package net reports,
// as poller.Sockaddr is.
type Sockaddr = net.Addr

// RawSockaddrAny stands for the buffer of a peer's address, which no call
// fills here.
type RawSockaddrAny struct{}

// Iovec is one buffer of a Writev, laid out as a struct iovec.
type Iovec struct {
	Base *byte
	Len  uint64
}

// SetLen sets the length of the buffer v describes.
func (v *Iovec) SetLen(n int) { v.Len = uint64(n) }
