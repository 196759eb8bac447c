//go:build !unix

package netconn

import (
	"net"

	"github.com/galeio/gale/internal/sock"
)

// sockaddr returns addr: where there are no Unix socket addresses, a
// sock.Sockaddr is a net.Addr (and sock.Sendto is unsupported).
func sockaddr(addr net.Addr) (sock.Sockaddr, error) { return addr, nil }
