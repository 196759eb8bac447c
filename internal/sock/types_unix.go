//go:build unix

package sock

import "golang.org/x/sys/unix"

// Sockaddr is a socket address as x/sys/unix decodes it: the type of the
// peers and sources sock's calls return and of Sendto's destination. It
// is poller.Sockaddr, so a loop's completions carry the same type.
type Sockaddr = unix.Sockaddr

// RawSockaddrAny is the buffer AcceptPeer has the kernel write a peer's
// address into.
type RawSockaddrAny = unix.RawSockaddrAny

// Iovec is one buffer of a Writev.
type Iovec = unix.Iovec
