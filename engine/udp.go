package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/galeio/gale/internal/sock"
)

var (
	// ErrDetached is OnClose's error for a connection taken back by Detach.
	ErrDetached = errors.New("engine: connection detached")
	// ErrDetachBusy is returned by Detach called from a callback when it
	// would have to wait for a loop: output or a receive is pending on the
	// connection (on io_uring, from its first read on), or the connection
	// is served by another loop. The connection is left as it was.
	ErrDetachBusy = errors.New("engine: Detach from a callback would have to wait for a loop")

	errUDPWrite        = errors.New("use WriteTo on a UDP socket")
	errUnsupportedConn = fmt.Errorf("engine: connection without a descriptor: %w", errors.ErrUnsupported)
)

// udpState is what a UDP socket's Conn has beyond a stream's.
type udpState struct {
	buf []byte // datagrams are received here: each UDP socket has its own
}

// listenUDP opens a UDP socket (one per loop with ReusePort) served as a
// Conn per socket.
func (e *Engine) listenUDP(network, addr string, cfg *ListenConfig) (net.Addr, error) {
	n := 1
	if e.opts.ReusePort {
		n = len(e.loops)
	}
	var first net.Addr
	for i := range n {
		lc := net.ListenConfig{Control: func(network, address string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) { serr = setListenOpts(int(fd), network, n > 1, 0, cfg) })
			if err == nil && serr == nil && cfg.Control != nil {
				serr = cfg.Control(network, address, rc)
			}
			return errors.Join(err, serr)
		}}
		pc, err := lc.ListenPacket(context.Background(), network, addr)
		if err != nil {
			return nil, err
		}
		fd, err := sock.DupConn(pc.(syscall.Conn))
		a := pc.LocalAddr()
		if err != nil {
			pc.Close()
			return nil, err
		}
		sock.Release(pc)
		if i == 0 {
			first, addr = a, a.String()
		}
		lp := e.loops[i]
		c := newConn(e, lp, fd, false, network, &a, nil)
		c.coldOf().udp = &udpState{buf: make([]byte, 64<<10)}
		c.kind |= kUDP
		if err := e.serve(held{c: c}); err != nil {
			return nil, err
		}
	}
	return first, nil
}

// WriteTo sends p as one datagram to addr from a UDP socket's Conn. It
// writes directly from the calling goroutine; a datagram the socket cannot
// take now fails (EAGAIN) rather than queueing, as UDP may drop anyway.
func (c *Conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if !c.kind.has(kUDP) {
		return 0, c.opError("write", errors.New("WriteTo needs a UDP socket"))
	}
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, c.opError("write", fmt.Errorf("WriteTo: %T is not a *net.UDPAddr", addr))
	}
	sa := udpSockaddr(ua)
	c.mu.Lock()
	defer c.mu.Unlock()
	fd, ok := c.fd.Acquire()
	if c.mbits.has(bDead) || !ok {
		if ok {
			c.fd.Release()
		}
		return 0, c.opError("write", net.ErrClosed)
	}
	err := sock.Sendto(fd, p, sa)
	c.fd.Release()
	if err != nil {
		return 0, c.opError("write", err)
	}
	c.lp.stats.bytesOut.Add(uint64(len(p)))
	return len(p), nil
}
