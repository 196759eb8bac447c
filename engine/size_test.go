package engine

import (
	"net"
	"net/netip"
	"testing"
	"unsafe"
)

// TestConnSize holds an idle connection's Conn to its 112-byte size
// class: what few connections need (UDP's and TLS's state, a peer address
// that is not a plain TCP one, the close's error, a Detach) lives in
// connCold, the queued byte count in the output queue, leftover input
// behind a pointer (inbuf.go), a TCP peer is kept in 20 bytes, the
// descriptor in 8 (sock.FD), and the flags in bits: what c is in a byte,
// the loop's in two, those mu guards in one.
func TestConnSize(t *testing.T) {
	if n := unsafe.Sizeof(Conn{}); n > 112 {
		t.Errorf("a Conn is %d bytes, want at most 112 (its size class)", n)
	}
}

// TestPeerAddr checks that a peer kept in compact form comes back as it
// went in: IPv4, IPv6, IPv4-mapped IPv6 (an AF_INET6 socket's view of an
// IPv4 peer), and an address with a zone, which goes whole in connCold.
func TestPeerAddr(t *testing.T) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:443", "[::ffff:10.1.2.3]:8080", "[fe80::1%lo]:9", "[2001:db8::5]:65535"} {
		ap := netip.MustParseAddrPort(s)
		c := new(Conn)
		c.setPeer(ap)
		got, ok := c.RemoteAddr().(*net.TCPAddr)
		if !ok || got.AddrPort() != ap {
			t.Errorf("setPeer(%s): RemoteAddr = %v, want %v", s, c.RemoteAddr(), ap)
		}
	}
	if a := new(Conn).RemoteAddr(); a != nil {
		t.Errorf("RemoteAddr without a peer = %v, want nil", a)
	}
}
