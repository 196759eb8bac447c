//go:build unix

package websocket

import (
	"net"
	"os"
	"syscall"
)

// socketPair returns the two ends of a connected Unix stream socket pair.
func socketPair() (inner net.Conn, outer halfConn, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	conns := [2]net.Conn{}
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "websocket-relay")
		conns[i], err = net.FileConn(f) // a duplicate of fd
		f.Close()
		if err != nil {
			if i == 1 {
				conns[0].Close()
			} else {
				syscall.Close(fds[1])
			}
			return nil, nil, err
		}
	}
	return conns[0], conns[1].(*net.UnixConn), nil
}
