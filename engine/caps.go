package engine

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"

	"github.com/galeio/gale/internal/sock"
)

// ErrTooManyConns is OnClose's error for a connection refused by
// Options.MaxConns or Options.MaxConnsPerIP: it got no OnOpen, and was
// reset at once. LoopStats.Refused counts them.
var ErrTooManyConns = errors.New("engine: too many connections")

var (
	errMaxConns      = fmt.Errorf("%w: Options.MaxConns reached", ErrTooManyConns)
	errMaxConnsPerIP = fmt.Errorf("%w from one address: Options.MaxConnsPerIP reached", ErrTooManyConns)
)

// RefusedStats count the connections refused at their arrival, by cap.
type RefusedStats struct {
	MaxConns      uint64 // Options.MaxConns
	MaxConnsPerIP uint64 // Options.MaxConnsPerIP
}

func (r *RefusedStats) add(o RefusedStats) {
	r.MaxConns += o.MaxConns
	r.MaxConnsPerIP += o.MaxConnsPerIP
}

// ipCounts counts the open connections of each peer address, for
// Options.MaxConnsPerIP. An address leaves the map with its last
// connection, so the map holds no more entries than connections.
type ipCounts struct {
	mu sync.Mutex
	n  map[netip.Addr]int32
}

// add counts one more connection from a, unless it has max already.
func (m *ipCounts) add(a netip.Addr, max int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n == nil {
		m.n = make(map[netip.Addr]int32)
	}
	if int(m.n[a]) >= max {
		return false
	}
	m.n[a]++
	return true
}

// remove counts one connection from a fewer.
func (m *ipCounts) remove(a netip.Addr) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.n[a] <= 1 {
		delete(m.n, a)
		return
	}
	m.n[a]--
}

// admit counts c in the engine's connections, and in its peer's once
// the peer is known (after a PROXY header), and returns the cap's error
// if c is one too many, counting nothing then. A cap applies to the
// connections accepted and adopted (kCapped), not to those dialed.
// Loop goroutine.
func (c *Conn) admit() error {
	e := c.lp.e
	n := e.conns.Add(1)
	if max := e.opts.MaxConns; max > 0 && c.kind.has(kCapped) && n > int64(max) {
		e.dropConn()
		c.lp.stats.refused[refusedTotal].Add(1)
		return errMaxConns
	}
	if c.proxyOf() != nil {
		return nil // feedProxy admits the peer the header names
	}
	if err := c.admitPeer(); err != nil {
		e.dropConn()
		return err
	}
	return nil
}

// admitPeer counts c in its peer's connections, for MaxConnsPerIP.
func (c *Conn) admitPeer() error {
	max := c.lp.e.opts.MaxConnsPerIP
	if max <= 0 || !c.kind.has(kCapped) || c.peer.fam == 0 {
		return nil
	}
	if !c.lp.e.perIP.add(c.peer.addrPort().Addr(), max) {
		c.lp.stats.refused[refusedPerIP].Add(1)
		return errMaxConnsPerIP
	}
	c.lbits.set(bPerIP, true)
	return nil
}

// releasePeer gives back c's place in its peer's count. Loop goroutine.
func (c *Conn) releasePeer() {
	if c.lbits.has(bPerIP) {
		c.lbits.set(bPerIP, false)
		c.lp.e.perIP.remove(c.peer.addrPort().Addr())
	}
}

// refuse closes c, which a cap refused before it was attached: it is
// reset, and OnClose reports err.
func (c *Conn) refuse(err error) {
	c.mu.Lock()
	c.mbits.set(bDead, true)
	c.mu.Unlock()
	c.lp.unassign()
	c.lbits.set(bClosed, true)
	sock.SetLingerZero(c.fd.Sysfd())
	c.fd.Close()
	c.setCloseError(err)
	c.callClose(err)
}

// The caps RefusedStats counts, as loopCounters.refused's indexes.
const (
	refusedTotal = iota
	refusedPerIP
	numRefused
)

// dropConn counts a connection fewer, and signals a Shutdown waiting for
// none once there are none.
func (e *Engine) dropConn() {
	if e.conns.Add(-1) == 0 {
		e.signalIdle()
	}
}
