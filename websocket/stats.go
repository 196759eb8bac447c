package websocket

import (
	"errors"
	"sync"
	"sync/atomic"
)

// Stats are the counters of the connections an Upgrader or a Dialer made.
// They live in the Upgrader or Dialer, not in the package, so that two
// servers in one process are told apart; the package-level Dial uses a
// Dialer of its own each time, whose connections no Stats reaches (use a
// Dialer to count them).
type Stats struct {
	// Open is the number of connections open: OnOpen ran, OnClose not
	// yet.
	Open int
	// MessagesIn and BytesIn count the messages OnMessage got, and their
	// bytes (decompressed, as OnMessage sees them).
	MessagesIn, BytesIn uint64
	// MessagesOut and BytesOut count the messages the connections took to
	// send (WriteMessage, WritePrepared, Broadcast, and streams once
	// closed; a stream's bytes as they are written), and their bytes
	// before compression. A message taken and then dropped (held behind
	// a stream the connection's end cut) is counted.
	MessagesOut, BytesOut uint64
	// Closes counts the closed connections by status: the code of the
	// peer's close frame (CloseStatus), the code a protocol error or
	// ErrReadLimit closed it with, and StatusAbnormalClosure for one that
	// ended without a close frame (the peer gone, CloseNow, a timeout).
	Closes map[StatusCode]uint64
}

// counters are an Upgrader's or Dialer's Stats. Each message costs one
// atomic add for the count and one for its bytes, on a line the
// connections share (a write may come from any goroutine, so a counter
// of the loop's would not do); a connection's close takes a lock, once.
type counters struct {
	msgsIn, bytesIn   atomic.Uint64
	msgsOut, bytesOut atomic.Uint64
	open              atomic.Int64

	mu     sync.Mutex
	closes map[StatusCode]uint64 // made on the first close
}

// received counts a message of n bytes handed to OnMessage. The loop.
func (k *counters) received(n int) {
	k.msgsIn.Add(1)
	k.bytesIn.Add(uint64(n))
}

// sent counts a whole message of n bytes taken to be sent. Any goroutine.
func (k *counters) sent(n int) {
	k.msgsOut.Add(1)
	k.bytesOut.Add(uint64(n))
}

// opened counts a connection whose OnOpen runs.
func (k *counters) opened() { k.open.Add(1) }

// closed counts a connection whose OnClose runs with err.
func (k *counters) closed(err error) {
	k.open.Add(-1)
	code := closeCode(err)
	k.mu.Lock()
	if k.closes == nil {
		k.closes = make(map[StatusCode]uint64)
	}
	k.closes[code]++
	k.mu.Unlock()
}

// closeCode is the status Stats.Closes counts a close with err under.
func closeCode(err error) StatusCode {
	var pe *ProtocolError
	switch {
	case errors.As(err, &pe):
		return pe.Code
	case errors.Is(err, ErrReadLimit):
		return StatusMessageTooBig
	}
	return CloseStatus(err)
}

// stats returns a snapshot of k; each counter is read atomically, the set
// is not.
func (k *counters) stats() Stats {
	s := Stats{
		Open:        int(k.open.Load()),
		MessagesIn:  k.msgsIn.Load(),
		BytesIn:     k.bytesIn.Load(),
		MessagesOut: k.msgsOut.Load(),
		BytesOut:    k.bytesOut.Load(),
	}
	k.mu.Lock()
	s.Closes = make(map[StatusCode]uint64, len(k.closes))
	for code, n := range k.closes {
		s.Closes[code] = n
	}
	k.mu.Unlock()
	return s
}

// Stats returns the counters of u's connections. Safe from any goroutine.
func (u *Upgrader) Stats() Stats { return u.config().stats.stats() }

// Stats returns the counters of d's connections. Safe from any goroutine.
func (d *Dialer) Stats() Stats { return d.config().stats.stats() }

// config returns u's config, made on first use.
func (u *Upgrader) config() *config {
	u.init()
	return u.cfg
}

// config returns d's config, made on first use.
func (d *Dialer) config() *config {
	d.once.Do(func() { d.cfg = newConfig(d.Options) })
	return d.cfg
}
