//go:build !unix && !windows

package sock

import (
	"net/netip"
	"syscall"
)

// AcceptPeer has no connection to take without waiting (EAGAIN): the
// loop's backend accepts.
func AcceptPeer(fd int, rsa *RawSockaddrAny) (nfd int, peer netip.AddrPort, sa Sockaddr, err error) {
	return -1, netip.AddrPort{}, nil, syscall.EAGAIN
}
