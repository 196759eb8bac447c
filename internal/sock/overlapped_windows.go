package sock

import (
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Overlapped Winsock calls, for the IOCP backend (internal/poller). Their
// addresses (uintptr) are of an OVERLAPPED, a WSABUF array, a flags word
// or an address buffer in memory outside the Go heap, which the backend
// owns, or, inside a WSABUF, of a Go buffer the backend keeps referenced
// until the operation's completion: the kernel writes to them after the
// call returns, and no Go pointer may be stored where only the kernel
// sees it.
//
// Each call returns 0 when the operation is under way: its completion
// packet will reach the socket's port, even when it finished at once (no
// socket is given FILE_SKIP_COMPLETION_PORT_ON_SUCCESS). Otherwise it
// returns the error, and no packet comes.

var (
	mswsock              = windows.NewLazySystemDLL("mswsock.dll")
	kernel32             = windows.NewLazySystemDLL("kernel32.dll")
	procWSARecv          = ws2.NewProc("WSARecv")
	procWSASend          = ws2.NewProc("WSASend")
	procWSARecvFrom      = ws2.NewProc("WSARecvFrom")
	procAcceptEx         = mswsock.NewProc("AcceptEx")
	procGetAcceptExAddrs = mswsock.NewProc("GetAcceptExSockaddrs")
	procCancelIoEx       = kernel32.NewProc("CancelIoEx")
)

// soUpdateAcceptContext is SO_UPDATE_ACCEPT_CONTEXT: an AcceptEx socket
// takes its listener's properties, which getpeername, shutdown and
// setsockopt need (Windows Sockets, "AcceptEx function", Remarks).
const soUpdateAcceptContext = 0x700B

// AcceptAddrLen is the room AcceptEx wants for each of the two addresses
// it writes: the largest sockaddr (sockaddr_in6, 28 bytes) plus 16.
const AcceptAddrLen = 28 + 16

// WSABuf is a WSABUF whose address is a plain number, so that the
// backend's off-heap arrays of them hold no Go pointer.
type WSABuf struct {
	Len uint32
	Buf uintptr
}

// pending maps a call's result: started (0) for success or
// WSA_IO_PENDING, the error otherwise.
func pending(r uintptr, en syscall.Errno) syscall.Errno {
	if !failed(r) || en == windows.ERROR_IO_PENDING { // WSA_IO_PENDING
		return 0
	}
	return en
}

// WSARecv starts an overlapped receive on fd into n WSABUFs at bufs;
// flags is the address of its flags word (0 in, the result's out).
func WSARecv(fd int, bufs uintptr, n int, flags, ov uintptr) syscall.Errno {
	r, _, e := syscall.SyscallN(procWSARecv.Addr(), uintptr(fd), bufs, uintptr(n), 0, flags, ov, 0)
	return pending(r, e)
}

// WSASend starts an overlapped send on fd of n WSABUFs at bufs.
func WSASend(fd int, bufs uintptr, n int, ov uintptr) syscall.Errno {
	r, _, e := syscall.SyscallN(procWSASend.Addr(), uintptr(fd), bufs, uintptr(n), 0, 0, ov, 0)
	return pending(r, e)
}

// WSARecvFrom starts an overlapped receive of one datagram on fd, whose
// source is written at from (fromLen: the address of its int32 size).
func WSARecvFrom(fd int, bufs uintptr, n int, flags, from, fromLen, ov uintptr) syscall.Errno {
	r, _, e := syscall.SyscallN(procWSARecvFrom.Addr(), uintptr(fd), bufs, uintptr(n), 0, flags, from, fromLen, ov, 0)
	return pending(r, e)
}

// AcceptEx starts an overlapped accept on the listening socket ln into
// the socket as, made beforehand (NewSocket). The two addresses land in
// the 2*AcceptAddrLen bytes at addrs; no data is received with them.
// recvd is the address of a word AcceptEx may write.
func AcceptEx(ln, as int, addrs, recvd, ov uintptr) syscall.Errno {
	r, _, e := syscall.SyscallN(procAcceptEx.Addr(), uintptr(ln), uintptr(as), addrs, 0, AcceptAddrLen, AcceptAddrLen, recvd, ov)
	if r != 0 { // a BOOL
		return 0
	}
	return pending(socketError, e)
}

// CancelIoEx cancels the operation of ov on fd (every one of fd's when ov
// is 0). ERROR_NOT_FOUND means it already completed: its packet is on
// the way.
func CancelIoEx(fd int, ov uintptr) syscall.Errno {
	r, _, en := syscall.SyscallN(procCancelIoEx.Addr(), uintptr(fd), ov)
	if r != 0 {
		return 0
	}
	return en
}

// NewSocket returns an overlapped, non-inherited stream socket of the
// family of listening socket ln, for AcceptEx.
func NewSocket(ln int) (int, syscall.Errno) {
	sa, err := windows.Getsockname(windows.Handle(ln))
	if err != nil {
		return -1, winErrno(err)
	}
	af := int32(windows.AF_INET)
	if _, ok := sa.(*windows.SockaddrInet6); ok {
		af = windows.AF_INET6
	}
	s, err := windows.WSASocket(af, windows.SOCK_STREAM, windows.IPPROTO_TCP, nil, 0, windows.WSA_FLAG_OVERLAPPED|wsaFlagNoInh)
	if err != nil {
		return -1, winErrno(err)
	}
	return int(s), 0
}

// FinishAccept makes as, which AcceptEx gave a connection from ln, a
// socket of its own (SO_UPDATE_ACCEPT_CONTEXT) and non-blocking.
func FinishAccept(as, ln int) syscall.Errno {
	h := windows.Handle(ln)
	err := windows.Setsockopt(windows.Handle(as), windows.SOL_SOCKET, soUpdateAcceptContext, (*byte)(unsafe.Pointer(&h)), int32(unsafe.Sizeof(h)))
	if err == nil {
		err = ioctl(windows.Handle(as), fionbio, 1)
	}
	if err != nil {
		return winErrno(err)
	}
	return 0
}

// AcceptPeerAt decodes the peer's address AcceptEx wrote at addrs (an
// IPv6 one keeps its scope as the zone); invalid if there is none.
func AcceptPeerAt(addrs uintptr) netip.AddrPort {
	var local, remote uintptr
	var llen, rlen int32
	syscall.SyscallN(procGetAcceptExAddrs.Addr(), addrs, 0, AcceptAddrLen, AcceptAddrLen,
		uintptr(unsafe.Pointer(&local)), uintptr(unsafe.Pointer(&llen)),
		uintptr(unsafe.Pointer(&remote)), uintptr(unsafe.Pointer(&rlen)))
	if remote == 0 {
		return netip.AddrPort{}
	}
	return SockaddrAt(remote, int(rlen))
}

// SockaddrAt decodes the sockaddr_in or sockaddr_in6 of n bytes at p,
// memory outside the Go heap that the kernel wrote; an IPv6 address
// keeps its scope as the zone, named as package net names it.
func SockaddrAt(p uintptr, n int) netip.AddrPort {
	if p == 0 || n < 8 {
		return netip.AddrPort{}
	}
	b := unsafe.Slice((*byte)(offHeap(p)), n)
	family := uint16(b[0]) | uint16(b[1])<<8
	port := uint16(b[2])<<8 | uint16(b[3])
	switch {
	case family == windows.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	case family == windows.AF_INET6 && n >= 28:
		a := netip.AddrFrom16([16]byte(b[8:24]))
		if scope := uint32(b[24]) | uint32(b[25])<<8 | uint32(b[26])<<16 | uint32(b[27])<<24; scope != 0 {
			a = a.WithZone(zoneName(scope))
		}
		return netip.AddrPortFrom(a, port)
	}
	return netip.AddrPort{}
}

// zoneName names scope ID id as package net does: the interface's name,
// or the number.
func zoneName(id uint32) string {
	if ifi, err := net.InterfaceByIndex(int(id)); err == nil {
		return ifi.Name
	}
	return strconv.FormatUint(uint64(id), 10)
}

// offHeap turns the address of memory outside the Go heap into a
// pointer. Reading the word in place, rather than converting the
// uintptr, tells vet that the conversion is meant: the memory is not
// the collector's, so no pointer rule applies.
func offHeap(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
