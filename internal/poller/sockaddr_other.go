//go:build !unix

package poller

import "net"

// Sockaddr is the type of Completion.From: where there are no Unix
// socket addresses (Windows, WebAssembly), the net.Addr package net
// reported, which only the net backend produces.
type Sockaddr = net.Addr
