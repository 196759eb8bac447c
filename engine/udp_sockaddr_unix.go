//go:build unix

package engine

import (
	"net"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// udpSockaddr converts ua for sendto(2): an IPv4 address (v4-mapped ones
// included) as AF_INET, any other as AF_INET6.
func udpSockaddr(ua *net.UDPAddr) sock.Sockaddr {
	if ip4 := ua.IP.To4(); ip4 != nil {
		s := &unix.SockaddrInet4{Port: ua.Port}
		copy(s.Addr[:], ip4)
		return s
	}
	s := &unix.SockaddrInet6{Port: ua.Port}
	copy(s.Addr[:], ua.IP.To16())
	return s
}
