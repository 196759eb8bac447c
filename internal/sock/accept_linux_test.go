package sock_test

import (
	"net"
	"net/netip"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// listenDup listens on network and address and returns the listener and
// a non-blocking duplicate of its descriptor; t's cleanup closes both.
// It skips when the address family is unavailable (no IPv6).
func listenDup(t *testing.T, network, address string) (net.Listener, int) {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Skipf("listen %s %s: %v", network, address, err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, dupConn(t, ln.(syscall.Conn))
}

// acceptPeer takes the next connection from lfd, waiting for it.
func acceptPeer(t *testing.T, lfd int, rsa *unix.RawSockaddrAny) (int, netip.AddrPort, unix.Sockaddr) {
	t.Helper()
	for {
		waitReadable(t, lfd)
		nfd, peer, sa, err := sock.AcceptPeer(lfd, rsa)
		if err == unix.EAGAIN {
			continue
		}
		if err != nil {
			t.Fatalf("AcceptPeer = %v", err)
		}
		t.Cleanup(func() { unix.Close(nfd) })
		return nfd, peer, sa
	}
}

// TestAcceptPeerInet: an IPv4 or IPv6 peer comes back as a netip.AddrPort,
// as the kernel reports it (a v4-mapped peer stays mapped), with a nil
// Sockaddr; the descriptor is non-blocking and close-on-exec, and PeerName
// agrees on both ends.
func TestAcceptPeerInet(t *testing.T) {
	tests := []struct {
		name           string
		network, laddr string // the listener
		dial           string // the address dialled, with the listener's port
		wantMapped     bool   // the peer shows as ::ffff:a.b.c.d
	}{
		{name: "IPv4", network: "tcp4", laddr: "127.0.0.1:0", dial: "127.0.0.1"},
		{name: "IPv6", network: "tcp6", laddr: "[::1]:0", dial: "::1"},
		{name: "v4-mapped", network: "tcp", laddr: "[::]:0", dial: "127.0.0.1", wantMapped: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, lfd := listenDup(t, tt.network, tt.laddr)
			if tt.wantMapped && ln.Addr().(*net.TCPAddr).IP.To4() != nil {
				t.Skip("the wildcard listener is IPv4 only")
			}
			var rsa unix.RawSockaddrAny
			if _, _, _, err := sock.AcceptPeer(lfd, &rsa); err != unix.EAGAIN {
				t.Fatalf("AcceptPeer on an empty queue = %v, want EAGAIN", err)
			}
			port := ln.Addr().(*net.TCPAddr).AddrPort().Port()
			c, err := net.Dial("tcp", netip.AddrPortFrom(netip.MustParseAddr(tt.dial), port).String())
			if err != nil {
				t.Skipf("dial: %v", err)
			}
			defer c.Close()
			nfd, peer, sa := acceptPeer(t, lfd, &rsa)
			wantCloexecNonblock(t, nfd)

			want := c.LocalAddr().(*net.TCPAddr).AddrPort()
			if tt.wantMapped {
				want = netip.AddrPortFrom(netip.AddrFrom16(want.Addr().As16()), want.Port())
			}
			if peer != want || sa != nil {
				t.Errorf("AcceptPeer peer, sa = %v, %#v, want %v, nil", peer, sa, want)
			}
			if got, sa, err := sock.PeerName(nfd, &rsa); got != want || sa != nil || err != nil {
				t.Errorf("PeerName(accepted) = %v, %#v, %v, want %v, nil, nil", got, sa, err, want)
			}
			cfd := dupConn(t, c.(syscall.Conn))
			wantServer := netip.AddrPortFrom(netip.MustParseAddr(tt.dial), port)
			if got, sa, err := sock.PeerName(cfd, &rsa); got != wantServer || sa != nil || err != nil {
				t.Errorf("PeerName(client) = %v, %#v, %v, want %v, nil, nil", got, sa, err, wantServer)
			}
		})
	}
}

// TestAcceptPeerUnix: a Unix socket's peer comes back as the Sockaddr
// unix.Accept4 and unix.Getpeername give, an unnamed or abstract one
// included, even with rsa holding an earlier, longer name.
func TestAcceptPeerUnix(t *testing.T) {
	dir := t.TempDir()
	ln, lfd := listenDup(t, "unix", filepath.Join(dir, "l"))
	tests := []struct {
		name  string
		local string // the client's bound name; "" for none
		want  string
	}{
		{name: "path", local: filepath.Join(dir, "c"), want: filepath.Join(dir, "c")},
		{name: "unnamed", want: "@"},
		{name: "abstract", local: "@gale-sock-test", want: "@gale-sock-test"},
	}
	var rsa unix.RawSockaddrAny
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := net.Dialer{}
			if tt.local != "" {
				d.LocalAddr = &net.UnixAddr{Name: tt.local, Net: "unix"}
			}
			c, err := d.Dial("unix", ln.Addr().String())
			if err != nil {
				t.Skipf("dial: %v", err)
			}
			defer c.Close()
			nfd, peer, sa := acceptPeer(t, lfd, &rsa)
			if u, ok := sa.(*unix.SockaddrUnix); peer.IsValid() || !ok || u.Name != tt.want {
				t.Errorf("AcceptPeer peer, sa = %v, %#v, want invalid, %q", peer, sa, tt.want)
			}
			std, err := unix.Getpeername(nfd)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(sa, std) {
				t.Errorf("AcceptPeer sa = %#v, want %#v as unix.Getpeername", sa, std)
			}
			if got, sa, err := sock.PeerName(nfd, &rsa); got.IsValid() || !reflect.DeepEqual(sa, std) || err != nil {
				t.Errorf("PeerName = %v, %#v, %v, want invalid, %#v, nil", got, sa, err, std)
			}
		})
	}
}

// TestAcceptPeerFault: an injected failure takes the place of the call,
// as for Accept, and the connection stays queued.
func TestAcceptPeerFault(t *testing.T) {
	_, lfd := listenDup(t, "tcp4", "127.0.0.1:0")
	c, err := net.Dial("tcp", sockName(t, lfd))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	restore := sock.SetFault(func(op sock.FaultOp, fd int) syscall.Errno {
		if op == sock.FaultAccept && fd == lfd {
			return unix.EMFILE
		}
		return 0
	})
	var rsa unix.RawSockaddrAny
	_, _, _, err = sock.AcceptPeer(lfd, &rsa)
	restore()
	if err != unix.EMFILE {
		t.Fatalf("AcceptPeer with EMFILE injected = %v, want EMFILE", err)
	}
	if _, peer, _ := acceptPeer(t, lfd, &rsa); peer != c.LocalAddr().(*net.TCPAddr).AddrPort() {
		t.Errorf("AcceptPeer after the fault = %v, want %v", peer, c.LocalAddr())
	}
}

// TestPeerNameNotConnected: getpeername's errno comes back raw.
func TestPeerNameNotConnected(t *testing.T) {
	_, lfd := listenDup(t, "tcp4", "127.0.0.1:0")
	var rsa unix.RawSockaddrAny
	if ap, sa, err := sock.PeerName(lfd, &rsa); err != unix.ENOTCONN || ap.IsValid() || sa != nil {
		t.Errorf("PeerName(listener) = %v, %#v, %v, want ENOTCONN", ap, sa, err)
	}
}

func sockName(t *testing.T, fd int) string {
	t.Helper()
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	ap, ok := sock.AddrPort(sa)
	if !ok {
		t.Fatalf("getsockname = %#v, want an inet address", sa)
	}
	return ap.String()
}

// TestDecodeSockaddr decodes raw addresses as unix.Accept4 would.
func TestDecodeSockaddr(t *testing.T) {
	v6 := netip.MustParseAddr("fe80::1")
	tests := []struct {
		name   string
		raw    func(*unix.RawSockaddrAny)
		wantAP netip.AddrPort
		wantSA unix.Sockaddr
		wantOK bool
	}{
		{"IPv4", func(r *unix.RawSockaddrAny) {
			p := (*unix.RawSockaddrInet4)(unsafe.Pointer(r))
			p.Family, p.Port, p.Addr = unix.AF_INET, htons(8080), [4]byte{127, 0, 0, 1}
		}, netip.MustParseAddrPort("127.0.0.1:8080"), nil, true},
		{"IPv6", func(r *unix.RawSockaddrAny) {
			p := (*unix.RawSockaddrInet6)(unsafe.Pointer(r))
			p.Family, p.Port, p.Addr = unix.AF_INET6, htons(443), v6.As16()
		}, netip.AddrPortFrom(v6, 443), nil, true},
		{"IPv6 scoped", func(r *unix.RawSockaddrAny) {
			p := (*unix.RawSockaddrInet6)(unsafe.Pointer(r))
			p.Family, p.Port, p.Addr, p.Scope_id = unix.AF_INET6, htons(443), v6.As16(), 3
		}, netip.AddrPort{}, &unix.SockaddrInet6{Port: 443, ZoneId: 3, Addr: v6.As16()}, true},
		{"Unix", func(r *unix.RawSockaddrAny) {
			p := (*unix.RawSockaddrUnix)(unsafe.Pointer(r))
			p.Family = unix.AF_UNIX
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&p.Path[0])), len(p.Path)), "/tmp/s")
		}, netip.AddrPort{}, &unix.SockaddrUnix{Name: "/tmp/s"}, true},
		{"Unix unnamed", func(r *unix.RawSockaddrAny) {
			r.Addr.Family = unix.AF_UNIX
		}, netip.AddrPort{}, &unix.SockaddrUnix{Name: "@"}, true},
		{"VSOCK", func(r *unix.RawSockaddrAny) {
			r.Addr.Family = unix.AF_VSOCK
		}, netip.AddrPort{}, nil, false},
	}
	for _, tt := range tests {
		var rsa unix.RawSockaddrAny
		tt.raw(&rsa)
		ap, sa, ok := sock.DecodeSockaddr(&rsa)
		if ap != tt.wantAP || !reflect.DeepEqual(sa, tt.wantSA) || ok != tt.wantOK {
			t.Errorf("%s: DecodeSockaddr = %v, %#v, %v, want %v, %#v, %v", tt.name, ap, sa, ok, tt.wantAP, tt.wantSA, tt.wantOK)
		}
	}
}

// htons stores port in network byte order.
func htons(port uint16) uint16 {
	var b [2]byte
	b[0], b[1] = byte(port>>8), byte(port)
	return *(*uint16)(unsafe.Pointer(&b))
}
