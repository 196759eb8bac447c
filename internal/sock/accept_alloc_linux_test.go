//go:build !race

package sock_test

import (
	"net"
	"net/netip"
	"testing"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// TestAcceptPeerAllocs: taking a queued IPv4 or IPv6 connection, decoding
// its peer and asking the peer's name allocate nothing.
func TestAcceptPeerAllocs(t *testing.T) {
	for _, tt := range []struct{ network, laddr string }{
		{"tcp4", "127.0.0.1:0"},
		{"tcp6", "[::1]:0"},
	} {
		t.Run(tt.network, func(t *testing.T) {
			ln, lfd := listenDup(t, tt.network, tt.laddr)
			const runs = 20
			var clients []net.Conn
			defer func() {
				for _, c := range clients {
					c.Close()
				}
			}()
			// AllocsPerRun makes one more call than runs, to warm up.
			for range runs + 1 {
				c, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				clients = append(clients, c)
			}
			waitReadable(t, lfd)
			var rsa unix.RawSockaddrAny
			var peer netip.AddrPort
			var bad error
			allocs := testing.AllocsPerRun(runs, func() {
				nfd, ap, _, err := sock.AcceptPeer(lfd, &rsa)
				if err != nil {
					bad = err
					return
				}
				peer = ap
				if _, _, err := sock.PeerName(nfd, &rsa); err != nil {
					bad = err
				}
				sock.DecodeSockaddr(&rsa)
				unix.Close(nfd)
			})
			if bad != nil {
				t.Fatalf("AcceptPeer or PeerName of a queued connection = %v", bad)
			}
			if !peer.IsValid() {
				t.Fatalf("AcceptPeer peer = %v, want the client's", peer)
			}
			if allocs != 0 {
				t.Errorf("AcceptPeer, PeerName and DecodeSockaddr: %v allocations per connection, want 0", allocs)
			}
		})
	}
}
