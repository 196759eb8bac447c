package benchtest

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
)

// Rounds measures a server of many connections: it dials nconns
// connections to addr, each with a client goroutine, before the timer
// starts; in every round each client writes size bytes and reads the echo
// back. One op is one round, and one warm-up round runs untimed. On return
// every connection is reset (SetLinger(0): no TIME_WAIT left for the next
// run) and every client goroutine has exited.
func Rounds(b *testing.B, addr string, nconns, size int) {
	conns := make([]*net.TCPConn, 0, nconns)
	gate := &gate{ch: make(chan struct{})}
	first := gate.ch
	var (
		round, clients sync.WaitGroup
		failed         firstErr
	)
	defer func() {
		for _, c := range conns {
			c.SetLinger(0)
			c.Close()
		}
		gate.open(true)
		clients.Wait()
	}()
	for range nconns {
		conns = append(conns, Dial(b, addr))
	}
	for i, c := range conns {
		clients.Add(1)
		go func() {
			defer clients.Done()
			msg, buf := make([]byte, size), make([]byte, size)
			Fill(msg)
			ch := first
			for r := uint64(0); ; r++ {
				<-ch
				var quit bool
				if ch, quit = gate.next(); quit {
					return
				}
				if err := roundTrip(c, msg, buf, r<<32|uint64(i)); err != nil {
					failed.set(fmt.Errorf("conn %d round %d: %v", i, r, err))
				}
				round.Done()
			}
		}()
	}
	run := func() {
		round.Add(nconns)
		gate.open(false)
		round.Wait()
		if err := failed.get(); err != nil {
			b.Fatal(err)
		}
	}
	run() // warm-up: goroutine stacks, buffers, first-use allocations
	b.SetBytes(int64(nconns * size))
	b.ReportAllocs()
	for b.Loop() {
		run()
	}
}

// roundTrip writes msg stamped with seq on c and reads and checks the echo
// into buf.
func roundTrip(c net.Conn, msg, buf []byte, seq uint64) error {
	Stamp(msg, seq)
	if _, err := c.Write(msg); err != nil {
		return fmt.Errorf("write: %v", err)
	}
	if _, err := io.ReadFull(c, buf); err != nil {
		return fmt.Errorf("read: %v", err)
	}
	return Check(buf, seq)
}

// gate releases the client goroutines of Rounds once per round, with one
// close instead of a send per client. open installs the next round's
// channel before closing the current one, so a client released by round r
// that asks for its next channel gets round r+1's and cannot run twice in
// one round.
type gate struct {
	mu   sync.Mutex
	ch   chan struct{} // the next open closes it
	quit bool          // the last open ended the rounds: clients return
}

func (g *gate) open(quit bool) {
	g.mu.Lock()
	cur := g.ch
	g.ch, g.quit = make(chan struct{}), quit
	g.mu.Unlock()
	close(cur)
}

func (g *gate) next() (chan struct{}, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch, g.quit
}
