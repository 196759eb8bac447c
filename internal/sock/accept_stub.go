//go:build !unix

package sock

import "net/netip"

// AcceptPeer fails with an error matching errors.ErrUnsupported.
func AcceptPeer(fd int, rsa *RawSockaddrAny) (nfd int, peer netip.AddrPort, sa Sockaddr, err error) {
	return -1, netip.AddrPort{}, nil, errUnsupported
}
