//go:build !unix

package sock

import (
	"net"
	"net/netip"
)

// AddrPort converts a TCP or UDP address; a v4-mapped IPv6 address comes
// back as IPv4, as on Unix.
func AddrPort(sa Sockaddr) (netip.AddrPort, bool) {
	var ap netip.AddrPort
	switch a := sa.(type) {
	case *net.TCPAddr:
		ap = a.AddrPort()
	case *net.UDPAddr:
		ap = a.AddrPort()
	default:
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), ap.IsValid()
}

// Addr returns sa, which is a net.Addr already: a backend here reports
// the address package net gave it, whatever the network.
func Addr(network string, sa Sockaddr) net.Addr { return sa }
