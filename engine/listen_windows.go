package engine

import (
	"context"
	"net"
	"time"

	"github.com/galeio/gale/internal/sock"
)

// dialNative connects a TCP socket with Winsock (sock.DialTCP) rather
// than package net, for the reason listenNative gives, and reports
// whether it acted.
func dialNative(ctx context.Context, network, addr string) (int, net.Addr, net.Addr, bool, error) {
	if !isTCP(network) {
		return -1, nil, nil, false, nil
	}
	fd, la, ra, err := sock.DialTCP(ctx, network, addr)
	if err != nil {
		return -1, nil, nil, true, &net.OpError{Op: "dial", Net: network, Addr: ra, Err: err}
	}
	return fd, la, ra, true, nil
}

// listenNative opens a TCP listener with Winsock (sock.ListenTCP) rather
// than package net, and reports whether it acted. A socket package net
// makes belongs to the Go runtime's completion port for life, so an
// IOCP loop could serve it only through its net backend; one of gale's
// own the loop's port takes, and accepts on with AcceptEx. Unix sockets
// and SO_REUSEPORT (which Windows lacks) are left to package net. lc's
// buffer sizes are set once the socket listens; its backlog and Control
// need package net's socket here.
func listenNative(network, addr string, reusePort bool, keepAlive time.Duration, lc *ListenConfig) (int, net.Addr, bool, error) {
	if !isTCP(network) || reusePort || lc.Backlog > 0 || lc.Control != nil {
		return -1, nil, false, nil
	}
	fd, a, err := sock.ListenTCP(network, addr)
	if err != nil {
		return -1, nil, true, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	if keepAlive > 0 {
		sock.SetKeepAlive(fd, keepAlive) // best effort, as in package net
	}
	if err := lc.sockOpts().Apply(fd, true); err != nil {
		sock.Close(fd)
		return -1, nil, true, &net.OpError{Op: "listen", Net: network, Addr: a, Err: err}
	}
	return fd, a, true, nil
}
