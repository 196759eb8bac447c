package sock

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// AcceptPeer wraps accept4(2): the new descriptor is non-blocking and
// close-on-exec from the start. A failure a test injected (Fault) takes
// the place of the call, so the connection stays in the backlog, as with
// a real EMFILE. EINTR is returned, like every other errno: the caller
// retries.
//
// It allocates nothing for an IPv4 or IPv6 peer (unix.Accept4 allocates
// a RawSockaddrAny and a Sockaddr per call, which a listener taking
// thousands of connections leaves for the collector). The kernel writes the peer's address into rsa, which the caller owns
// and may reuse at once (AcceptPeer keeps nothing of it); one caller at a
// time per rsa. An inet peer comes back as peer (see DecodeSockaddr) with
// a nil sa; any other (a Unix socket's, an IPv6 address with a scope) as
// sa, as unix.Accept4 gives it, with peer invalid.
func AcceptPeer(fd int, rsa *unix.RawSockaddrAny) (nfd int, peer netip.AddrPort, sa unix.Sockaddr, err error) {
	if e := Fault(FaultAccept, fd); e != 0 {
		return -1, netip.AddrPort{}, nil, e
	}
	*rsa = unix.RawSockaddrAny{} // see DecodeSockaddr
	n := uint32(unix.SizeofSockaddrAny)
	r, _, e := unix.Syscall6(unix.SYS_ACCEPT4, uintptr(fd), uintptr(unsafe.Pointer(rsa)), uintptr(unsafe.Pointer(&n)),
		unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0, 0)
	if e != 0 {
		return -1, netip.AddrPort{}, nil, e
	}
	nfd = int(r)
	peer, sa, err = decodeOrAsk(nfd, rsa)
	if err != nil {
		unix.Close(nfd) // as unix.Accept4 does when it cannot decode
		return -1, netip.AddrPort{}, nil, err
	}
	return nfd, peer, sa, nil
}

// PeerName wraps getpeername(2) the way AcceptPeer wraps accept4(2): the
// kernel writes the address of fd's peer into rsa, which the caller owns
// and may reuse at once; an IPv4 or IPv6 peer comes back as a
// netip.AddrPort, without allocating, and any other as a unix.Sockaddr
// (as unix.Getpeername gives it), with the AddrPort invalid. It is for
// the io_uring backend, whose multishot accept reports no address. The
// error is the raw errno (ENOTCONN once the peer reset the connection).
func PeerName(fd int, rsa *unix.RawSockaddrAny) (netip.AddrPort, unix.Sockaddr, error) {
	*rsa = unix.RawSockaddrAny{}
	n := uint32(unix.SizeofSockaddrAny)
	_, _, e := unix.Syscall(unix.SYS_GETPEERNAME, uintptr(fd), uintptr(unsafe.Pointer(rsa)), uintptr(unsafe.Pointer(&n)))
	if e != 0 {
		return netip.AddrPort{}, nil, e
	}
	return decodeOrAsk(fd, rsa)
}

// decodeOrAsk decodes rsa, the address of fd's peer; a family
// DecodeSockaddr does not know (AF_VSOCK, AF_TIPC and the like, never a
// TCP listener's) is left to unix.Getpeername, which knows them all.
func decodeOrAsk(fd int, rsa *unix.RawSockaddrAny) (netip.AddrPort, unix.Sockaddr, error) {
	if ap, sa, ok := DecodeSockaddr(rsa); ok {
		return ap, sa, nil
	}
	sa, err := unix.Getpeername(fd)
	return netip.AddrPort{}, sa, err
}

// DecodeSockaddr decodes the address the kernel wrote into rsa, which
// must have been zeroed before the call (an unnamed Unix socket's address
// is the family alone). AF_INET and AF_INET6 without a scope ID give a
// netip.AddrPort and a nil Sockaddr, without allocating; the address is
// as the kernel reported it, so a v4-mapped IPv6 peer stays mapped (Unmap
// it to show it as package net does). An IPv6 address with a scope ID
// (a link-local peer) gives a *unix.SockaddrInet6 instead, which keeps
// the interface index, and AF_UNIX a *unix.SockaddrUnix as unix.Accept4
// would (an abstract or unnamed name starts with '@'); both allocate.
// ok is false for any other family. rsa is not modified.
//
// An inet address is taken as an IP socket's: an L2TP/IP socket (for
// which unix.Accept4 asks SO_PROTOCOL) is a datagram socket and accepts
// nothing.
func DecodeSockaddr(rsa *unix.RawSockaddrAny) (ap netip.AddrPort, sa unix.Sockaddr, ok bool) {
	switch rsa.Addr.Family {
	case unix.AF_INET:
		p := (*unix.RawSockaddrInet4)(unsafe.Pointer(rsa))
		return netip.AddrPortFrom(netip.AddrFrom4(p.Addr), ntohs(p.Port)), nil, true
	case unix.AF_INET6:
		p := (*unix.RawSockaddrInet6)(unsafe.Pointer(rsa))
		if p.Scope_id == 0 {
			return netip.AddrPortFrom(netip.AddrFrom16(p.Addr), ntohs(p.Port)), nil, true
		}
		return netip.AddrPort{}, &unix.SockaddrInet6{Port: int(ntohs(p.Port)), ZoneId: p.Scope_id, Addr: p.Addr}, true
	case unix.AF_UNIX:
		return netip.AddrPort{}, unixSockaddr((*unix.RawSockaddrUnix)(unsafe.Pointer(rsa))), true
	}
	return netip.AddrPort{}, nil, false
}

// unixSockaddr decodes p as unix.Accept4 does: a name starting with a NUL
// byte (abstract, or none at all) shows it as '@', and the name ends at
// the first NUL.
func unixSockaddr(p *unix.RawSockaddrUnix) *unix.SockaddrUnix {
	path := unsafe.Slice((*byte)(unsafe.Pointer(&p.Path[0])), len(p.Path))
	n := 1
	for n < len(path) && path[n] != 0 {
		n++
	}
	if path[0] != 0 {
		return &unix.SockaddrUnix{Name: string(path[:n])}
	}
	return &unix.SockaddrUnix{Name: "@" + string(path[1:n])}
}

// ntohs converts a port in network byte order, as the kernel stores it.
func ntohs(port uint16) uint16 {
	b := (*[2]byte)(unsafe.Pointer(&port))
	return uint16(b[0])<<8 | uint16(b[1])
}
