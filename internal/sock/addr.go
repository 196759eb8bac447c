//go:build unix

package sock

import (
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// AddrPort converts an IPv4 or IPv6 socket address.
func AddrPort(sa unix.Sockaddr) (netip.AddrPort, bool) {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port)), true
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port)), true // as net shows v4-mapped peers
	}
	return netip.AddrPort{}, false
}

// Addr converts a socket address of network ("tcp*", "udp*", "unix",
// "unixgram", "unixpacket") to a net.Addr; nil when sa is nil or unknown.
func Addr(network string, sa unix.Sockaddr) net.Addr {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return ipAddr(network, net.IP(append([]byte(nil), sa.Addr[:]...)), sa.Port, "")
	case *unix.SockaddrInet6:
		zone := ""
		if sa.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(sa.ZoneId)); err == nil {
				zone = ifi.Name
			}
		}
		return ipAddr(network, net.IP(append([]byte(nil), sa.Addr[:]...)), sa.Port, zone)
	case *unix.SockaddrUnix:
		switch network {
		case "unixgram", "unixpacket":
			return &net.UnixAddr{Name: sa.Name, Net: network}
		}
		return &net.UnixAddr{Name: sa.Name, Net: "unix"}
	}
	return nil
}

func ipAddr(network string, ip net.IP, port int, zone string) net.Addr {
	switch network {
	case "udp", "udp4", "udp6":
		return &net.UDPAddr{IP: ip, Port: port, Zone: zone}
	}
	return &net.TCPAddr{IP: ip, Port: port, Zone: zone}
}
