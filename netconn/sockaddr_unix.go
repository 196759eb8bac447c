//go:build unix

package netconn

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/internal/sock"
)

// sockaddr converts a UDP or Unix address for sendto(2).
func sockaddr(addr net.Addr) (sock.Sockaddr, error) {
	switch a := addr.(type) {
	case *net.UDPAddr:
		return ipSockaddr(a.IP, a.Port)
	case *net.UnixAddr:
		return &unix.SockaddrUnix{Name: a.Name}, nil
	}
	return nil, syscall.EINVAL
}

func ipSockaddr(ip net.IP, port int) (sock.Sockaddr, error) {
	if ip4 := ip.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: port}
		copy(sa.Addr[:], ip4)
		return sa, nil
	}
	if len(ip) == net.IPv6len {
		sa := &unix.SockaddrInet6{Port: port}
		copy(sa.Addr[:], ip)
		return sa, nil
	}
	return nil, syscall.EINVAL
}
