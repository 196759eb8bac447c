//go:build unix && !linux

package sock

import (
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"
)

// accept wraps accept(2) and makes the new descriptor non-blocking and
// close-on-exec. Without accept4, the descriptor exists briefly without
// close-on-exec; holding syscall.ForkLock, as package net does, keeps a
// concurrent fork/exec from inheriting it.
func accept(fd int) (int, unix.Sockaddr, error) {
	syscall.ForkLock.RLock()
	nfd, sa, err := unix.Accept(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, nil, err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, nil, err
	}
	return nfd, sa, nil
}

// AcceptPeer is accept(2) made non-blocking and close-on-exec, with the
// signature of Linux's, which takes an inet peer without allocating (see
// accept_linux.go). Here the peer always comes back as sa, with peer
// invalid, and rsa is unused.
func AcceptPeer(fd int, rsa *unix.RawSockaddrAny) (nfd int, peer netip.AddrPort, sa unix.Sockaddr, err error) {
	nfd, sa, err = accept(fd)
	return nfd, netip.AddrPort{}, sa, err
}
