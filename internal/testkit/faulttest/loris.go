package faulttest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Trickler is a slowloris: it writes one byte, never a newline, to each
// of its conns per interval of running time, spreading the writes evenly.
// Paused, it writes nothing, and does not catch up afterwards.
type Trickler struct {
	Paused   atomic.Bool  // set to pause the trickle
	sent     atomic.Int64 // bytes written
	conns    []net.Conn
	interval time.Duration
	timeout  time.Duration
	stop     chan struct{}
	done     chan error
}

// StartTrickle starts a Trickler on conns; each write may take up to
// timeout.
func StartTrickle(conns []net.Conn, interval, timeout time.Duration) *Trickler {
	tr := &Trickler{conns: conns, interval: interval, timeout: timeout, stop: make(chan struct{}), done: make(chan error, 1)}
	go func() { tr.done <- tr.run() }()
	return tr
}

// Sent returns the bytes written so far.
func (tr *Trickler) Sent() int64 { return tr.sent.Load() }

// End stops the trickle and returns the first write error.
func (tr *Trickler) End() error {
	close(tr.stop)
	return <-tr.done
}

func (tr *Trickler) run() error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var running time.Duration
	last := time.Now()
	for n := 0; ; {
		select {
		case <-tr.stop:
			return nil
		case <-tick.C:
		}
		now := time.Now()
		if !tr.Paused.Load() {
			running += now.Sub(last)
		}
		last = now
		due := int(float64(len(tr.conns)) * float64(running) / float64(tr.interval))
		for ; n < due; n++ {
			c := tr.conns[n%len(tr.conns)]
			c.SetWriteDeadline(time.Now().Add(tr.timeout))
			if _, err := c.Write([]byte{'x'}); err != nil {
				return fmt.Errorf("slowloris conn %d: Write = %w", n%len(tr.conns), err)
			}
			tr.sent.Add(1)
		}
	}
}

// LineTrips runs n 64-byte line round trips on each peer at once, each
// peer within timeout, and returns the round trips per second, all peers
// together. A round trip that fails or echoes other bytes fails t.
func LineTrips(t testing.TB, peers []net.Conn, n int, timeout time.Duration) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			msg, got := lineMsg(i), make([]byte, 64)
			p.SetDeadline(time.Now().Add(timeout))
			defer p.SetDeadline(time.Time{})
			for k := range n {
				if err := lineTrip(p, msg, got); err != nil {
					t.Errorf("peer %d round trip %d of %d: %v", i, k, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n*len(peers)) / time.Since(start).Seconds()
}

// BenchLineTrips runs 64-byte line round trips on peers, each peer on a
// goroutine of its own (b.RunParallel, one goroutine per peer): one op is
// one round trip. Each round trip may take up to timeout.
func BenchLineTrips(b *testing.B, peers []net.Conn, timeout time.Duration) {
	b.Helper()
	var next atomic.Int64
	b.SetParallelism((len(peers) + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.SetBytes(64)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1) - 1)
		if i >= len(peers) {
			return // SetParallelism rounds up: a goroutine without a peer
		}
		p, msg, got := peers[i], lineMsg(i), make([]byte, 64)
		defer p.SetDeadline(time.Time{})
		for pb.Next() {
			p.SetDeadline(time.Now().Add(timeout))
			if err := lineTrip(p, msg, got); err != nil {
				b.Errorf("peer %d: %v", i, err)
				return
			}
		}
	})
}

// lineMsg is peer i's 64-byte line.
func lineMsg(i int) []byte { return append(bytes.Repeat([]byte{byte('a' + i%26)}, 63), '\n') }

// lineTrip writes msg to p and reads its echo into got.
func lineTrip(p net.Conn, msg, got []byte) error {
	if _, err := p.Write(msg); err != nil {
		return err
	}
	if _, err := io.ReadFull(p, got); err != nil {
		return err
	}
	if !bytes.Equal(got, msg) {
		return fmt.Errorf("echo %q, want %q", got, msg)
	}
	return nil
}

// Median returns the median of v, 0 if v is empty.
func Median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}
