//go:build !unix

package engine

import (
	"net"

	"github.com/galeio/gale/internal/sock"
)

// udpSockaddr returns ua: where there are no Unix socket addresses, a
// sock.Sockaddr is a net.Addr (and sock.Sendto is unsupported).
func udpSockaddr(ua *net.UDPAddr) sock.Sockaddr { return ua }
