//go:build unix

package poller

import "golang.org/x/sys/unix"

// Sockaddr is the type of Completion.From: on Unix systems the socket
// address x/sys/unix decodes, which internal/sock turns into a net.Addr.
type Sockaddr = unix.Sockaddr
