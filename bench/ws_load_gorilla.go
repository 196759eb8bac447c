package main

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// gorillaLoader is the load generator on gorilla/websocket's client: the
// connections sit idle with no goroutine; each echo loop is a goroutine
// writing a message and reading its echo with blocking calls.
type gorillaLoader struct {
	conns []*websocket.Conn // nil where the dial failed
	pl    *wsPayload
}

func (g *gorillaLoader) connect(o *wsLoadOptions) (int, []error) {
	g.conns = make([]*websocket.Conn, o.n)
	g.pl = newWsPayload(o.payload)
	nd := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: o.keepAlive}
	if o.src != "" {
		nd.LocalAddr = &net.TCPAddr{IP: net.ParseIP(o.src)}
		nd.Control = bindAddressNoPort
	}
	d := websocket.Dialer{NetDialContext: nd.DialContext, HandshakeTimeout: 10 * time.Second}
	errs := dialAll(o.n, o.dialers, func(i int) error {
		c, _, err := d.Dial(o.urls[i%len(o.urls)], nil)
		if err != nil {
			return err
		}
		buf := g.pl.fill(make([]byte, 0, o.payload), uint32(i), 0)
		if err := c.WriteMessage(websocket.BinaryMessage, buf); err != nil {
			c.Close()
			return err
		}
		_, msg, err := c.ReadMessage()
		if err != nil {
			c.Close()
			return err
		}
		if !g.pl.check(msg, uint32(i), 0) {
			c.Close()
			return errBadEcho
		}
		g.conns[i] = c
		return nil
	})
	return o.n - len(errs), errs
}

func (g *gorillaLoader) echo(o *wsLoadOptions, st *wsEchoStats) error {
	ctx, cancel := context.WithTimeout(context.Background(), o.dur)
	defer cancel()
	start := time.Now()
	// A server that stops answering fails the reads instead of hanging.
	for _, c := range g.conns {
		if c != nil {
			c.SetReadDeadline(start.Add(o.dur + 10*time.Second))
		}
	}
	var wg sync.WaitGroup
	for loop := range o.conc {
		wg.Go(func() {
			buf := make([]byte, 0, o.payload)
			seq := uint32(1)
			for ctx.Err() == nil {
				for i := loop; i < len(g.conns) && ctx.Err() == nil; i += o.conc {
					c := g.conns[i]
					if c == nil {
						continue
					}
					t0 := time.Now()
					if err := c.WriteMessage(websocket.BinaryMessage, g.pl.fill(buf, uint32(i), seq)); err != nil {
						st.fail(fmt.Errorf("conn %d: write: %w", i, err))
						st.lost.Add(1)
						g.conns[i] = nil
						continue
					}
					_, msg, err := c.ReadMessage()
					if err != nil {
						st.fail(fmt.Errorf("conn %d: read: %w", i, err))
						st.lost.Add(1)
						g.conns[i] = nil
						continue
					}
					if !g.pl.check(msg, uint32(i), seq) {
						st.bad.Add(1)
						st.fail(errBadEcho)
					}
					st.add(time.Since(t0))
				}
				seq++
			}
		})
	}
	wg.Wait()
	st.secs = time.Since(start).Seconds()
	return nil
}

func (g *gorillaLoader) close() {
	for _, c := range g.conns {
		if c != nil {
			c.Close()
		}
	}
}
