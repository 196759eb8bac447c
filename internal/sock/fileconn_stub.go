//go:build !unix

package sock

import "net"

// FileConn fails with an error matching errors.ErrUnsupported.
func FileConn(fd int) (net.Conn, error) { return nil, errUnsupported }
