package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// galeLoader is the load generator on gale's Dialer: every connection is
// served on the engine's loops (GOMAXPROCS of them), with no goroutine;
// the echo loops are callbacks: each echo received sends the loop's next
// message, on its next connection, from OnMessage.
type galeLoader struct {
	websocket.BaseHandler
	conns []atomic.Pointer[websocket.Conn] // nil where the dial failed or the connection closed
	st    []galeLoadConn
	pl    *wsPayload
	bufs  sync.Pool

	conc     int
	stats    *wsEchoStats
	echoing  atomic.Bool // an echo run is on
	stopping atomic.Bool // it is ending: no more sends
	inflight atomic.Int64
	drained  chan struct{} // closed (by drain) when inflight drops to 0 while stopping
	drain    func()
	closing  atomic.Bool
}

// galeLoadConn is a connection's state: its index, the sequence number of
// the message it waits for, when that was sent (Unix ns), and the
// greeting's signal.
type galeLoadConn struct {
	idx     uint32
	seq     atomic.Uint32
	sent    atomic.Int64
	waiting atomic.Bool // a message is in flight
	greeted chan struct{}
}

func newGaleLoader() *galeLoader { return &galeLoader{} }

func (g *galeLoader) connect(o *wsLoadOptions) (int, []error) {
	g.conns = make([]atomic.Pointer[websocket.Conn], o.n)
	g.st = make([]galeLoadConn, o.n)
	g.pl = newWsPayload(o.payload)
	g.bufs.New = func() any { b := make([]byte, 0, o.payload); return &b }
	eo := engine.Options{TCPKeepAlive: o.keepAlive}
	switch o.backend {
	case "epoll":
		eo.Backend = backend.Epoll
	case "io_uring":
		eo.Backend = backend.IOURing
	case "auto", "":
	default:
		return 0, []error{fmt.Errorf("-backend %q: auto, epoll or io_uring", o.backend)}
	}
	e, err := websocket.NewEngine(eo)
	if err != nil {
		return 0, []error{err}
	}
	d := &websocket.Dialer{Options: websocket.Options{Handler: g, Engine: e}, HandshakeTimeout: 10 * time.Second}
	if o.src != "" {
		// package net dials from the source address; the loop adopts the
		// socket.
		nd := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(o.src)}, KeepAlive: o.keepAlive, Control: bindAddressNoPort}
		d.NetDialContext = nd.DialContext
	}
	errs := dialAll(o.n, o.dialers, func(i int) error {
		st := &g.st[i]
		st.idx = uint32(i)
		st.greeted = make(chan struct{})
		// The state is the connection's from the start: its callbacks may
		// run before Dial returns.
		c, _, err := d.DialWith(context.Background(), o.urls[i%len(o.urls)], st)
		if err != nil {
			return err
		}
		g.conns[i].Store(c)
		if err := g.send(c, st, 0); err != nil {
			return err
		}
		select {
		case <-st.greeted:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("conn %d: no echo of the greeting in 10 s", i)
		}
	})
	return o.n - len(errs), errs
}

// send sends message seq on c.
func (g *galeLoader) send(c *websocket.Conn, st *galeLoadConn, seq uint32) error {
	bp := g.bufs.Get().(*[]byte)
	*bp = g.pl.fill(*bp, st.idx, seq)
	st.seq.Store(seq)
	st.waiting.Store(true)
	st.sent.Store(time.Now().UnixNano())
	err := c.WriteMessage(websocket.BinaryMessage, *bp)
	g.bufs.Put(bp)
	return err
}

func (g *galeLoader) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	st, _ := c.Context().(*galeLoadConn)
	if st == nil || !st.waiting.Swap(false) {
		if s := g.stats; s != nil {
			s.bad.Add(1)
			s.fail(errors.New("an unexpected message"))
		}
		return
	}
	seq := st.seq.Load()
	ok := g.pl.check(data, st.idx, seq)
	if !g.echoing.Load() { // the greeting
		if ok {
			close(st.greeted)
		}
		return
	}
	s := g.stats
	s.add(time.Duration(time.Now().UnixNano() - st.sent.Load()))
	if !ok {
		s.bad.Add(1)
		s.fail(errBadEcho)
	}
	if g.stopping.Load() {
		g.done()
		return
	}
	// The loop's next connection, skipping the closed ones.
	next := int(st.idx)
	for range len(g.conns)/g.conc + 1 {
		next += g.conc
		if next >= len(g.conns) {
			next %= g.conc
		}
		if nc := g.conns[next].Load(); nc != nil {
			if err := g.send(nc, &g.st[next], g.st[next].seq.Load()+1); err != nil {
				s.fail(fmt.Errorf("conn %d: write: %w", next, err))
				s.lost.Add(1)
				g.done()
			}
			return
		}
	}
	g.done()
}

// done counts an echo loop that ended.
func (g *galeLoader) done() {
	if g.inflight.Add(-1) == 0 && g.stopping.Load() {
		g.drain()
	}
}

func (g *galeLoader) OnClose(c *websocket.Conn, err error) {
	st, _ := c.Context().(*galeLoadConn)
	if st == nil || g.closing.Load() {
		return
	}
	g.conns[st.idx].Store(nil)
	if s := g.stats; s != nil && g.echoing.Load() {
		s.fail(fmt.Errorf("conn %d closed: %v", st.idx, err))
		if st.waiting.Swap(false) {
			s.lost.Add(1)
			g.done()
		}
	}
}

func (g *galeLoader) echo(o *wsLoadOptions, s *wsEchoStats) error {
	g.conc = o.conc
	g.stats = s
	g.drained = make(chan struct{})
	g.drain = sync.OnceFunc(func() { close(g.drained) })
	g.stopping.Store(false)
	g.echoing.Store(true)
	start := time.Now()
	for i := range o.conc {
		if c := g.conns[i].Load(); c != nil {
			g.inflight.Add(1)
			if err := g.send(c, &g.st[i], g.st[i].seq.Load()+1); err != nil {
				s.fail(fmt.Errorf("conn %d: write: %w", i, err))
				g.inflight.Add(-1)
			}
		}
	}
	time.Sleep(o.dur)
	g.stopping.Store(true)
	if g.inflight.Load() == 0 {
		g.drain()
	}
	var err error
	select {
	case <-g.drained:
	case <-time.After(10 * time.Second):
		err = fmt.Errorf("%d echoes still missing 10 s after the end", g.inflight.Load())
	}
	s.secs = time.Since(start).Seconds()
	g.echoing.Store(false)
	return err
}

func (g *galeLoader) close() {
	g.closing.Store(true)
	for i := range g.conns {
		if c := g.conns[i].Load(); c != nil {
			c.CloseNow()
		}
	}
}
