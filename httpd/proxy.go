package httpd

import (
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/proxyproto"
)

// proxied returns nc, or, if it comes from a balancer p trusts, nc with
// its PROXY header read on first use: for a connection net/http's
// goroutine serves (a loop reads its own: engine.Adoption.Proxy).
func proxied(nc net.Conn, p *engine.ProxyProtocol) net.Conn {
	if p == nil || !p.Trusts(nc.RemoteAddr()) {
		return nc
	}
	return &proxyConn{Conn: nc, p: p}
}

// proxyConn reads its PROXY header on the goroutine that first asks for
// its RemoteAddr or reads (net/http asks for the address first thing),
// within the header's timeout. A connection whose header is bad keeps
// its socket's address, and its reads fail, so net/http closes it.
type proxyConn struct {
	net.Conn
	p     *engine.ProxyProtocol
	once  sync.Once
	raddr net.Addr
	rest  []byte // what came after the header
	err   error
}

func (c *proxyConn) RemoteAddr() net.Addr {
	c.once.Do(c.readHeader)
	return c.raddr
}

func (c *proxyConn) Read(b []byte) (int, error) {
	c.once.Do(c.readHeader)
	switch {
	case c.err != nil:
		return 0, c.err
	case len(c.rest) > 0:
		n := copy(b, c.rest)
		c.rest = c.rest[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// readHeader reads the header, and what came with it.
func (c *proxyConn) readHeader() {
	c.raddr = c.Conn.RemoteAddr()
	d := c.p.Timeout
	if d <= 0 {
		d = engine.DefaultProxyTimeout
	}
	c.Conn.SetReadDeadline(time.Now().Add(d))
	defer c.Conn.SetReadDeadline(time.Time{})
	var buf []byte
	chunk := make([]byte, 512)
	for {
		n, rerr := c.Conn.Read(chunk)
		buf = append(buf, chunk[:n]...)
		h, hn, err := proxyproto.Parse(buf, c.p.MaxHeader)
		switch {
		case err != nil:
			c.fail(err)
			return
		case hn > 0:
			if ta, ok := h.Source.(*net.TCPAddr); ok && !h.Local {
				c.raddr = ta
			}
			c.rest = buf[hn:]
			return
		case rerr != nil:
			c.fail(rerr)
			return
		}
	}
}

// fail records why the header could not be read: a read error, which
// net/http takes for the client's (it closes the connection, unanswered).
func (c *proxyConn) fail(err error) {
	c.err = &net.OpError{Op: "read", Net: c.LocalAddr().Network(), Source: c.LocalAddr(), Addr: c.raddr,
		Err: fmt.Errorf("%w: %w", engine.ErrProxyHeader, err)}
}
