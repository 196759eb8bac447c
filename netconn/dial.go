package netconn

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/sock"
)

// Dialer is net.Dialer with the choice of backend. The embedded
// net.Dialer connects (timeouts, LocalAddr, KeepAlive, Control, the
// resolver and the rest apply as in package net); the connection then
// moves onto gale's loops.
type Dialer struct {
	net.Dialer
	// Backend chooses the loops' kernel interface; GALE_BACKEND
	// overrides it.
	Backend backend.Kind
}

// Dial connects to address on network, as net.Dial: "tcp", "tcp4",
// "tcp6" and "unix" give a *Conn; "udp", "udp4", "udp6" and "unixgram" a
// *PacketConn.
func Dial(network, address string) (net.Conn, error) {
	var d Dialer
	return d.DialContext(context.Background(), network, address)
}

// DialTimeout is Dial with a timeout, as net.DialTimeout.
func DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	d := Dialer{Dialer: net.Dialer{Timeout: timeout}}
	return d.DialContext(context.Background(), network, address)
}

// Dial connects to address on network; see the package function Dial.
func (d *Dialer) Dial(network, address string) (net.Conn, error) {
	return d.DialContext(context.Background(), network, address)
}

// DialContext connects to address on network until ctx ends, as
// net.Dialer.DialContext; see the package function Dial for networks.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6", "unix", "udp", "udp4", "udp6", "unixgram":
	default:
		return nil, &net.OpError{Op: "dial", Net: network, Err: net.UnknownNetworkError(network)}
	}
	nc, err := d.Dialer.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	switch network {
	case "udp", "udp4", "udp6", "unixgram":
		return adoptPacket(nc, network, d.Backend, "dial")
	}
	c, err := adopt(nc, network, d.Backend, nil)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Addr: nc.RemoteAddr(), Err: err}
	}
	return c, nil
}

// adopt moves nc, a connected stream socket, onto kind's loops: it takes
// a duplicate of the descriptor and closes nc. buffered are bytes already
// received from nc.
func adopt(nc net.Conn, network string, kind backend.Kind, buffered []byte) (*Conn, error) {
	laddr, raddr := nc.LocalAddr(), nc.RemoteAddr()
	sc, ok := nc.(syscall.Conn)
	if !ok {
		nc.Close()
		return nil, errNoDescriptor
	}
	fd, err := sock.DupConn(sc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	sock.Release(nc)
	g, err := acquire(kind)
	if err != nil {
		sock.Close(fd)
		return nil, err
	}
	return newConn(g, fd, network, laddr, raddr, buffered), nil
}
