package faulttest

import (
	"bytes"
	"fmt"
	"io"
	"net"
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
// together.
func LineTrips(t *testing.T, peers []net.Conn, n int, timeout time.Duration) float64 {
	t.Helper()
	start := time.Now()
	var wg sync.WaitGroup
	for i, p := range peers {
		wg.Go(func() {
			msg, got := append(bytes.Repeat([]byte{byte('a' + i)}, 63), '\n'), make([]byte, 64)
			p.SetDeadline(time.Now().Add(timeout))
			defer p.SetDeadline(time.Time{})
			for k := range n {
				if _, err := p.Write(msg); err != nil {
					t.Errorf("peer %d round trip %d: %v", i, k, err)
					return
				}
				if _, err := io.ReadFull(p, got); err != nil || !bytes.Equal(got, msg) {
					t.Errorf("peer %d round trip %d: %q, %v", i, k, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return float64(n*len(peers)) / time.Since(start).Seconds()
}

// Median returns the median of v, 0 if v is empty.
func Median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// MedianRatio returns the median of the ratios beside[i] / alone[i]: each
// pair's two measurements are taken back to back, so that the machine's
// load, which drifts, weighs on both alike.
func MedianRatio(beside, alone []float64) float64 {
	r := make([]float64, len(beside))
	for i := range beside {
		r[i] = beside[i] / alone[i]
	}
	return Median(r)
}
