//go:build !unix && !windows

package websocket

import (
	"errors"
	"net"
)

// socketPair fails with an error matching errors.ErrUnsupported: there
// is no socketpair(2) here, and no engine to adopt an end either.
func socketPair() (inner net.Conn, outer halfConn, err error) {
	return nil, nil, errors.ErrUnsupported
}
