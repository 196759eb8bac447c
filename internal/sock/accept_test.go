//go:build unix

package sock_test

import (
	"net"
	"net/netip"
	"testing"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// TestAccept: an empty queue gives EAGAIN; a queued connection comes back
// non-blocking and close-on-exec, with the peer's address (in peer on
// Linux, in sa elsewhere).
func TestAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	lfd := dupConn(t, ln.(*net.TCPListener))
	var rsa unix.RawSockaddrAny
	if _, _, _, err := sock.AcceptPeer(lfd, &rsa); err != unix.EAGAIN {
		t.Fatalf("Accept on an empty queue = %v, want EAGAIN", err)
	}
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var nfd int
	var peer netip.AddrPort
	var sa unix.Sockaddr
	for {
		waitReadable(t, lfd)
		nfd, peer, sa, err = sock.AcceptPeer(lfd, &rsa)
		if err != unix.EAGAIN {
			break
		}
	}
	if err != nil {
		t.Fatalf("Accept = %v", err)
	}
	defer unix.Close(nfd)
	wantCloexecNonblock(t, nfd)
	if p, ok := sa.(*unix.SockaddrInet4); ok {
		peer = netip.AddrPortFrom(netip.AddrFrom4(p.Addr), uint16(p.Port))
	}
	if int(peer.Port()) != c.LocalAddr().(*net.TCPAddr).Port {
		t.Fatalf("Accept peer = %v %#v, want port %d", peer, sa, c.LocalAddr().(*net.TCPAddr).Port)
	}
}

// TestTCPOptionsRoundTrip: options saved from one TCP socket and restored
// on another match; for other sockets Restore does nothing.
func TestTCPOptionsRoundTrip(t *testing.T) {
	c1, _ := tcpPair(t)
	c2, _ := tcpPair(t)
	if err := c1.SetNoDelay(false); err != nil {
		t.Fatal(err)
	}
	if err := c1.SetKeepAlive(true); err != nil {
		t.Fatal(err)
	}
	fd1, fd2 := dupConn(t, c1), dupConn(t, c2)
	if err := c2.SetKeepAlive(false); err != nil {
		t.Fatal(err)
	}
	opts := []struct {
		level, name int
		label       string
	}{
		{unix.IPPROTO_TCP, unix.TCP_NODELAY, "TCP_NODELAY"},
		{unix.SOL_SOCKET, unix.SO_KEEPALIVE, "SO_KEEPALIVE"},
	}
	get := func(fd, level, name int) int {
		v, err := unix.GetsockoptInt(fd, level, name)
		if err != nil {
			t.Fatalf("getsockopt: %v", err)
		}
		return v
	}
	if err := sock.SaveTCPOptions(fd1).Restore(fd2); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	for _, o := range opts {
		if a, b := get(fd1, o.level, o.name), get(fd2, o.level, o.name); (a != 0) != (b != 0) {
			t.Errorf("%s after Restore = %d, want %d as saved", o.label, b, a)
		}
	}

	a, _ := pair(t)
	if err := sock.SaveTCPOptions(a).Restore(fd2); err != nil {
		t.Fatalf("Restore of a unix socket's options = %v, want nil", err)
	}
}
