//go:build !windows

package engine

import (
	"context"
	"net"
	"time"
)

// dialNative leaves every dial to package net here.
func dialNative(ctx context.Context, network, addr string) (int, net.Addr, net.Addr, bool, error) {
	return -1, nil, nil, false, nil
}

// listenNative leaves every listener to package net here: its sockets
// are descriptors the loops' backends take as they are.
func listenNative(network, addr string, reusePort bool, keepAlive time.Duration, lc *ListenConfig) (int, net.Addr, bool, error) {
	return -1, nil, false, nil
}
