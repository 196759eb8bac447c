package engine

import (
	"net"
	"net/netip"
)

// connCold holds what few connections need, so that an idle Conn stays
// small: a UDP socket's state, a TLS connection's, a peer address that is not a plain TCP
// one, a network outside the known ones, and what the close and Detach
// record. It is made before the Conn is shared when the Conn has any of
// the first three, else on the loop when first needed (coldOf), and never
// replaced, so any goroutine may Load it.
type connCold struct {
	udp      *udpState   // a UDP socket's; set before the Conn is shared
	tls      *tlsState   // a TLS connection's; set before the Conn is shared
	raddr    net.Addr    // the peer, when c.peer cannot hold it; set before the Conn is shared
	network  string      // when c.kind.net() is netOther; set before the Conn is shared
	closeErr error       // what OnClose gets; loop-owned
	detached *handOver   // set by Detach: where finish sends the descriptor; loop-owned
	proxy    *proxyWait  // the PROXY header awaited, until it came; loop-owned
	early    *earlyTasks // a held connection's tasks, until its attach is posted; set before the Conn is shared
	pool     *pooled     // the callbacks' queue with Options.Pool; set before the Conn is shared
}

// coldOf returns c's cold part, made if c has none. It runs before c is
// shared or on c's loop, the only goroutines that make it.
func (c *Conn) coldOf() *connCold {
	k := c.cold.Load()
	if k == nil {
		k = new(connCold)
		c.cold.Store(k)
	}
	return k
}

// udpOf returns c's UDP state, nil for a stream. Safe from any goroutine.
func (c *Conn) udpOf() *udpState {
	if !c.kind.has(kUDP) {
		return nil
	}
	return c.cold.Load().udp
}

// tlsOf returns c's TLS state, nil unless c is a TLS connection. Safe
// from any goroutine.
func (c *Conn) tlsOf() *tlsState {
	if !c.kind.has(kTLS) {
		return nil
	}
	return c.cold.Load().tls
}

// tlsHeld reports whether c's TLS handshake holds its reading back. It
// runs on c's loop.
func (c *Conn) tlsHeld() bool {
	t := c.tlsOf()
	return t != nil && t.hold
}

// setTLS makes c a TLS connection with state t, before c is shared.
func (c *Conn) setTLS(t *tlsState) {
	c.coldOf().tls = t
	c.kind |= kTLS
}

// closeError returns the error c's close recorded. It runs on c's loop.
func (c *Conn) closeError() error {
	if k := c.cold.Load(); k != nil {
		return k.closeErr
	}
	return nil
}

// setCloseError records err as what c's close reports. A nil error on a
// connection without a cold part needs none made. It runs on c's loop.
func (c *Conn) setCloseError(err error) {
	if err != nil || c.cold.Load() != nil {
		c.coldOf().closeErr = err
	}
}

// detachedTo returns the hand-over Detach started, or nil. It runs on c's
// loop.
func (c *Conn) detachedTo() *handOver {
	if k := c.cold.Load(); k != nil {
		return k.detached
	}
	return nil
}

// netKind is a Conn's network, one of the known ones in a byte.
type netKind uint8

const netOther netKind = 0 // in connCold.network

var networks = [...]string{netOther: "", 1: "tcp", "tcp4", "tcp6", "unix", "unixpacket", "unixgram", "udp", "udp4", "udp6"}

// setNetwork records network for c, before c is shared.
func (c *Conn) setNetwork(network string) {
	for i, n := range networks {
		if i > 0 && n == network {
			c.kind = c.kind&^kNet | kindBits(netKind(i))
			return
		}
	}
	c.kind = c.kind&^kNet | kindBits(netOther)
	c.coldOf().network = network
}

// network returns c's network, as package net names it.
func (c *Conn) network() string {
	if c.kind.net() != netOther {
		return networks[c.kind.net()]
	}
	return c.cold.Load().network
}

// peerAddr is a TCP peer's address and port in 20 bytes (a netip.AddrPort
// takes 32): fam is 0 for none, 4 or 6. An address with a zone does not
// fit, and goes whole in connCold.raddr.
type peerAddr struct {
	ip   [16]byte
	port uint16
	fam  uint8
}

// setPeer records ap as c's peer, before c is shared.
func (c *Conn) setPeer(ap netip.AddrPort) {
	a := ap.Addr()
	switch {
	case !ap.IsValid():
	case a.Zone() != "":
		c.coldOf().raddr = net.TCPAddrFromAddrPort(ap)
	case a.Is4():
		c.peer = peerAddr{ip: a.As16(), port: ap.Port(), fam: 4}
	default:
		c.peer = peerAddr{ip: a.As16(), port: ap.Port(), fam: 6}
	}
}

// addrPort returns the peer as a netip.AddrPort; invalid for none.
func (p *peerAddr) addrPort() netip.AddrPort {
	switch p.fam {
	case 4:
		return netip.AddrPortFrom(netip.AddrFrom16(p.ip).Unmap(), p.port)
	case 6:
		return netip.AddrPortFrom(netip.AddrFrom16(p.ip), p.port)
	}
	return netip.AddrPort{}
}
