//go:build !unix

package sock

import "syscall"

// DupConn fails with an error matching errors.ErrUnsupported: without
// Unix descriptors no connection can move onto gale's loops.
func DupConn(c syscall.Conn) (fd int, err error) { return -1, errUnsupported }

// Dup fails with an error matching errors.ErrUnsupported.
func Dup(fd int) (int, error) { return -1, errUnsupported }

// Close fails with an error matching errors.ErrUnsupported: no call here
// hands out a descriptor to close.
func Close(fd int) error { return errUnsupported }

// IsStream reports true, IsStream's answer when it cannot ask.
func IsStream(fd int) bool { return true }
