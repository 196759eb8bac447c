//go:build !windows

package engine

import (
	"net"
	"time"
)

// listenNative leaves every listener to package net here: its sockets
// are descriptors the loops' backends take as they are.
func listenNative(network, addr string, reusePort bool, keepAlive time.Duration) (int, net.Addr, bool, error) {
	return -1, nil, false, nil
}
