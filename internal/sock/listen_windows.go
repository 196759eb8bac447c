package sock

import (
	"net"
	"os"

	"golang.org/x/sys/windows"
)

// ListenTCP opens a listening TCP socket on address of network ("tcp",
// "tcp4" or "tcp6"), made with Winsock rather than package net: an
// overlapped, non-inherited, non-blocking socket that no completion port
// has yet, so that the IOCP backend can take it and accept with AcceptEx.
// ("tcp" on an unspecified address listens on both families, as package
// net does.) It returns the socket and its bound address.
func ListenTCP(network, address string) (int, net.Addr, error) {
	ta, err := net.ResolveTCPAddr(network, address)
	if err != nil {
		return -1, nil, err
	}
	sa, af := tcpSockaddr(network, ta)
	s, err := windows.WSASocket(af, windows.SOCK_STREAM, windows.IPPROTO_TCP, nil, 0, windows.WSA_FLAG_OVERLAPPED|wsaFlagNoInh)
	if err != nil {
		return -1, nil, os.NewSyscallError("WSASocket", err)
	}
	if err := listenOn(s, sa, af == windows.AF_INET6 && network == "tcp"); err != nil {
		windows.Closesocket(s)
		return -1, nil, err
	}
	bound, err := windows.Getsockname(s)
	if err != nil {
		windows.Closesocket(s)
		return -1, nil, os.NewSyscallError("getsockname", err)
	}
	return int(s), tcpAddr(bound), nil
}

// tcpSockaddr returns a's socket address and family: IPv6 for "tcp6",
// for an IPv6 address, and for "tcp" on no address (dual-stack).
func tcpSockaddr(network string, a *net.TCPAddr) (windows.Sockaddr, int32) {
	if ip4 := a.IP.To4(); ip4 != nil && network != "tcp6" {
		sa := &windows.SockaddrInet4{Port: a.Port}
		copy(sa.Addr[:], ip4)
		return sa, windows.AF_INET
	}
	if a.IP == nil && network == "tcp4" {
		return &windows.SockaddrInet4{Port: a.Port}, windows.AF_INET
	}
	sa := &windows.SockaddrInet6{Port: a.Port}
	copy(sa.Addr[:], a.IP.To16())
	return sa, windows.AF_INET6
}

// listenOn binds s to sa and listens, non-blocking; dual clears
// IPV6_V6ONLY first.
func listenOn(s windows.Handle, sa windows.Sockaddr, dual bool) error {
	if dual {
		windows.SetsockoptInt(s, windows.IPPROTO_IPV6, windows.IPV6_V6ONLY, 0)
	}
	if err := windows.Bind(s, sa); err != nil {
		return os.NewSyscallError("bind", err)
	}
	if err := windows.Listen(s, windows.SOMAXCONN); err != nil {
		return os.NewSyscallError("listen", err)
	}
	return ioctl(s, fionbio, 1)
}
