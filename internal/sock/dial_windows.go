package sock

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// DialTCP connects to address on network ("tcp", "tcp4" or "tcp6") with
// a socket made by Winsock rather than package net: overlapped,
// non-inherited, non-blocking, with TCP_NODELAY set as package net sets
// it, and on no completion port yet, so that the IOCP backend can take
// it. The host is resolved with net.DefaultResolver; its addresses are
// tried in turn (no Happy Eyeballs) until one connects or ctx ends. It
// returns the socket and its local and remote addresses.
func DialTCP(ctx context.Context, network, address string) (int, net.Addr, net.Addr, error) {
	addrs, err := resolveTCP(ctx, network, address)
	if err != nil {
		return -1, nil, nil, err
	}
	for _, ap := range addrs {
		var s windows.Handle
		if s, err = connectTCP(ctx, ap); err == nil {
			la, _ := windows.Getsockname(s)
			return int(s), tcpAddr(la), net.TCPAddrFromAddrPort(ap), nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return -1, nil, nil, err
}

// resolveTCP returns the addresses of address's host, of network's
// family, with its port.
func resolveTCP(ctx context.Context, network, address string) ([]netip.AddrPort, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	port, err := net.DefaultResolver.LookupPort(ctx, network, portStr)
	if err != nil {
		return nil, err
	}
	ipNet := map[string]string{"tcp": "ip", "tcp4": "ip4", "tcp6": "ip6"}[network]
	if ipNet == "" {
		return nil, net.UnknownNetworkError(network)
	}
	if host == "" {
		host = "localhost"
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.AddrPort, 0, len(ips))
	for _, ip := range ips {
		out = append(out, netip.AddrPortFrom(ip.Unmap(), uint16(port)))
	}
	if len(out) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return out, nil
}

// connectTCP makes a socket and connects it to ap, waiting for the
// connection through the poll hub until ctx ends.
func connectTCP(ctx context.Context, ap netip.AddrPort) (windows.Handle, error) {
	af, sa := int32(windows.AF_INET), windows.Sockaddr(nil)
	if ap.Addr().Is4() {
		sa = &windows.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	} else {
		af = windows.AF_INET6
		sa = &windows.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
	}
	s, err := windows.WSASocket(af, windows.SOCK_STREAM, windows.IPPROTO_TCP, nil, 0, windows.WSA_FLAG_OVERLAPPED|wsaFlagNoInh)
	if err != nil {
		return windows.InvalidHandle, os.NewSyscallError("WSASocket", err)
	}
	if err = connectWait(ctx, s, sa); err != nil {
		windows.Closesocket(s)
		return windows.InvalidHandle, err
	}
	windows.SetsockoptInt(s, windows.IPPROTO_TCP, windows.TCP_NODELAY, 1)
	return s, nil
}

// connectWait starts a non-blocking connect of s to sa and waits until
// it ends or ctx does.
func connectWait(ctx context.Context, s windows.Handle, sa windows.Sockaddr) error {
	if err := ioctl(s, fionbio, 1); err != nil {
		return err
	}
	err := windows.Connect(s, sa)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, windows.WSAEWOULDBLOCK):
		return connectError(err)
	}
	w := newPollWaiter(s, false)
	defer hub.kick(&w) // out of the hub's set
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		d := slice
		if dl, ok := ctx.Deadline(); ok {
			d = max(min(d, time.Until(dl)), time.Millisecond)
		}
		if _, err := hub.wait(&w, d); err != nil {
			return err
		}
		if err := connectResult(s); err != errConnecting {
			return err
		}
	}
}

// connectError wraps a failed connect's error with its portable errno.
func connectError(err error) error {
	var en windows.Errno
	if errors.As(err, &en) {
		err = PortableErrno(en)
	}
	return os.NewSyscallError("connect", err)
}

// connectResult reports how s's connect ended: nil once connected, an
// error once it failed, and errConnecting while it goes on.
func connectResult(s windows.Handle) error {
	if soErr, err := windows.GetsockoptInt(s, windows.SOL_SOCKET, soError); err == nil && soErr != 0 {
		return connectError(windows.Errno(soErr))
	}
	if _, err := windows.Getpeername(s); err != nil {
		return errConnecting
	}
	return nil
}

// errConnecting is connectResult's word for a connect still going on.
var errConnecting = errors.New("connecting")

// soError is SO_ERROR.
const soError = 0x1007
