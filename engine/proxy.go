package engine

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/proxyproto"
)

// ProxyProtocol reads the PROXY protocol header (HAProxy's versions 1
// and 2) that a load balancer sends at the start of each connection, on
// the loop: a connection waiting for its header holds no goroutine and
// at most the header's bytes. Once the header is whole, RemoteAddr is
// the client it names, and the connection goes on as any other: its TLS
// handshake (ListenConfig.TLS), then OnOpen, then OnData with the bytes
// after the header. A v2 LOCAL header (a health check of the balancer's
// own) or a v1 UNKNOWN one keeps the socket's own peer.
//
// A ProxyProtocol must not be changed once given to the engine.
type ProxyProtocol struct {
	// Trusted lists the networks of the balancers: a connection from one
	// of them must begin with a header, and is closed without OnOpen if
	// it sends a malformed one or none within Timeout. A connection from
	// elsewhere is served as it is, with no header read: its first bytes
	// are its protocol's, so a header it sends is the protocol's error,
	// and no client can choose its own RemoteAddr. Empty trusts no one:
	// list the balancers' addresses (netip.MustParsePrefix("10.0.0.0/8"),
	// or "0.0.0.0/0" and "::/0" when only balancers can reach the port).
	Trusted []netip.Prefix
	// Timeout bounds the wait for the header, from the connection's
	// arrival. Default 5 s: a balancer sends it at once.
	Timeout time.Duration
	// MaxHeader bounds a version 2 header, its TLVs included (version 1
	// is at most 107 bytes). Default 4 KiB; longer headers close the
	// connection.
	MaxHeader int
}

// DefaultProxyTimeout is ProxyProtocol.Timeout's default.
const DefaultProxyTimeout = 5 * time.Second

// ErrProxyHeader closes a connection from a trusted balancer whose PROXY
// header is malformed or longer than ProxyProtocol.MaxHeader, or did not
// come within ProxyProtocol.Timeout (the error then also matches
// os.ErrDeadlineExceeded).
var ErrProxyHeader = errors.New("engine: bad PROXY protocol header")

// errProxyTimeout is ErrProxyHeader for a header that did not come in
// time: a net.Error whose Timeout is true.
var errProxyTimeout error = &proxyTimeout{timeoutError{ErrProxyHeader.Error() + ": none within the timeout"}}

type proxyTimeout struct{ timeoutError }

func (e *proxyTimeout) Is(target error) bool {
	return target == ErrProxyHeader || e.timeoutError.Is(target)
}

// Trusts reports whether a connection from peer comes from a trusted
// balancer, and so must begin with a header. It is safe for concurrent
// use.
func (p *ProxyProtocol) Trusts(peer net.Addr) bool {
	ap, ok := addrPortOf(peer)
	if !ok {
		return false
	}
	a := ap.Addr().Unmap()
	for _, n := range p.Trusted {
		if n.Contains(a) {
			return true
		}
	}
	return false
}

func addrPortOf(a net.Addr) (netip.AddrPort, bool) {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort(), true
	}
	return netip.AddrPort{}, false
}

// proxyWait is a connection's state while it waits for its header:
// the bytes received so far (the header is short: they are copied) and
// the timer. Loop-owned.
type proxyWait struct {
	cfg   *ProxyProtocol
	buf   []byte
	timer loop.Timer
}

// awaitProxy makes c wait for a header before it is opened, if p is set
// and c's peer is trusted. It runs before c is shared.
func (c *Conn) awaitProxy(p *ProxyProtocol) {
	if p == nil || !p.Trusts(c.RemoteAddr()) {
		return
	}
	w := &proxyWait{cfg: p}
	w.timer.Fire = func(time.Time) { c.fail(errProxyTimeout) }
	c.coldOf().proxy = w
}

// proxyOf returns c's wait for its header, nil once it came. Loop
// goroutine.
func (c *Conn) proxyOf() *proxyWait {
	if k := c.cold.Load(); k != nil {
		return k.proxy
	}
	return nil
}

// beginProxy starts c's wait for its header once c is attached: the
// timeout, then reading.
func (c *Conn) beginProxy(l *loop.Loop, w *proxyWait) {
	d := w.cfg.Timeout
	if d <= 0 {
		d = DefaultProxyTimeout
	}
	l.Schedule(&w.timer, l.Now().Add(d))
	c.startRead()
}

// feedProxy takes bytes received while c waits for its header: once the
// header is whole, c takes the client's address and is opened with the
// bytes after it. A malformed header closes c. Loop goroutine.
func (c *Conn) feedProxy(w *proxyWait, data []byte) {
	w.buf = append(w.buf, data...)
	h, n, err := proxyproto.Parse(w.buf, w.cfg.MaxHeader)
	switch {
	case err != nil:
		c.fail(c.opError("read", fmt.Errorf("%w: %w", ErrProxyHeader, err)))
		return
	case n == 0:
		return // a prefix: wait for more
	}
	c.lp.l.Unschedule(&w.timer)
	k := c.cold.Load()
	k.proxy = nil
	if ap, ok := addrPortOf(h.Source); ok && !h.Local {
		k.raddr = nil
		c.setPeer(netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	if err := c.admitPeer(); err != nil {
		c.lbits.set(bReset, true)
		c.fail(err)
		return
	}
	rest := w.buf[n:]
	c.opened(rest)
}

// opened goes on with c, attached and past its PROXY header if it had
// one: the TLS handshake, or OnOpen. rest is what came after the header.
func (c *Conn) opened(rest []byte) {
	if c.kind.has(kTLS) {
		c.beginHandshake(c.lp.l)
		if len(rest) > 0 && !c.lbits.has(bClosed|bClosing) {
			c.feedHandshake(rest)
		}
		return
	}
	if len(rest) > 0 {
		c.in = c.lp.e.inputs.append(c.in, rest)
	}
	c.open()
}
