package aio_test

import (
	"io"
	"math/bits"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// BenchmarkSubmitDuringConnectBurst measures submissions on connections
// already delegated while new connections are being delegated: 8
// goroutines each submit 64-byte Writes on their own delegated loopback
// TCP connection (at most bxInFlight pending each), completed through one
// WaitIO consumer, while a burst goroutine dials a local listener without
// pause, submits a first (nil-buffer) Read on each new connection, which
// delegates it, and frees it bxRing connections later. One op is one
// Write. Metrics: submits/s (Writes per second of the timed part),
// conns/s (connections delegated meanwhile) and p99-submit-ns (the 99th
// percentile of one Write call, to within 1/8 of its power of two).
// Names have the form Size/Backend for benchstat:
//
//	go test -run '^$' -bench SubmitDuringConnectBurst -count 5 ./aio/ | tee burst.txt
//
// The listener closes what it accepts, so the open descriptors stay near
// 2 × bxRing + 16 whatever the number of connections dialed.
func BenchmarkSubmitDuringConnectBurst(b *testing.B) {
	for _, k := range backendtest.Kinds() {
		b.Run("64B/"+k.String(), func(b *testing.B) {
			if err := poller.Available(k); err != nil {
				b.Skipf("%v backend unavailable here: %v", k, err)
			}
			bxConnectBurst(b, aio.Config{Backend: k}, 64)
		})
	}
}

const (
	bxWriters  = 8
	bxInFlight = 64 // pending Writes per writer
	bxRing     = 32 // connections of the burst delegated at once
	// bxMaxConns bounds the connections one run of the burst dials; at
	// the rates of a 2-core machine (under 10,000 a second) a run of the
	// default benchtime stays well below it.
	bxMaxConns = 100_000
)

// bxWriter is one submitting goroutine's connection and its window of
// pending Writes; it is the context of its Writes.
type bxWriter struct {
	c      net.Conn
	tokens chan struct{} // one per pending Write
	hist   bxHist
}

func bxConnectBurst(b *testing.B, cfg aio.Config, size int) {
	w, err := aio.NewWatcherConfig(cfg)
	if err != nil {
		b.Fatalf("NewWatcherConfig = %v", err)
	}
	defer w.Close()
	writers := make([]*bxWriter, bxWriters)
	for i := range writers {
		c, peer := stTCPPair(b)
		go io.Copy(io.Discard, peer) // ends when cleanup closes peer
		writers[i] = &bxWriter{c: c, tokens: make(chan struct{}, bxInFlight)}
	}

	var written atomic.Int64
	allDone := make(chan struct{})
	consumed := make(chan struct{})
	go func() {
		defer close(consumed)
		bxBurstConsumer(b, w, int64(b.N), &written, allDone)
	}()
	// Delegate the writers' connections before the clock starts.
	for _, wr := range writers {
		wr.tokens <- struct{}{}
		if err := w.Write(nil, wr.c, make([]byte, 1)); err != nil {
			b.Fatalf("Write = %v", err)
		}
	}
	stWaitFor(b, nil, "the writers' connections delegated", func() bool { return written.Load() == bxWriters })
	written.Store(0)
	for _, wr := range writers {
		<-wr.tokens
	}

	burst := bxStartBurst(b, w)
	defer burst.stop()
	stWaitFor(b, nil, "the burst under way", func() bool { return burst.conns.Load() >= bxRing })

	msg := make([]byte, size)
	var left atomic.Int64
	left.Store(int64(b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start, dialed := time.Now(), burst.conns.Load()
	var wg sync.WaitGroup
	for _, wr := range writers {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				wr.tokens <- struct{}{}
				t0 := time.Now()
				if err := w.Write(wr, wr.c, msg); err != nil {
					b.Errorf("Write = %v, want nil", err)
					return
				}
				wr.hist.add(time.Since(t0))
			}
		})
	}
	wg.Wait()
	select {
	case <-allDone:
	case <-time.After(stTimeout):
		b.Fatalf("%d of %d Writes completed within %v", written.Load(), b.N, stTimeout)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	conns := burst.conns.Load() - dialed
	burst.stop()

	var all bxHist
	for _, wr := range writers {
		all.merge(&wr.hist)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "submits/s")
	b.ReportMetric(float64(conns)/elapsed.Seconds(), "conns/s")
	b.ReportMetric(float64(all.quantile(0.99)), "p99-submit-ns")
	w.Close()
	<-consumed
}

// bxBurstConsumer is the benchmark's WaitIO loop: it returns a writer's
// token for each of its Writes, closes allDone once n Writes (counted in
// written) have completed, and ignores the burst's reads. It returns when
// w is closed.
func bxBurstConsumer(b *testing.B, w *aio.Watcher, n int64, written *atomic.Int64, allDone chan struct{}) {
	var once sync.Once
	for {
		results, err := w.WaitIO()
		if err != nil {
			return
		}
		for _, res := range results {
			if res.Operation != aio.OpWrite {
				continue // the burst's first reads: EOF or freed
			}
			if res.Error != nil {
				b.Errorf("Write completed with %v, want nil", res.Error)
			}
			if wr, ok := res.Context.(*bxWriter); ok {
				<-wr.tokens
			} else {
				written.Add(1) // a writer's delegating Write
				continue
			}
			if written.Add(1) == n {
				once.Do(func() { close(allDone) })
			}
		}
	}
}

// bxBurst is the goroutine that delegates new connections.
type bxBurst struct {
	conns    atomic.Int64 // connections delegated so far
	quit     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// bxStartBurst dials a listener of its own on 127.0.0.1 in a loop until
// stop (or bxMaxConns): each connection gets a nil-buffer Read, which delegates it, and is
// freed bxRing connections later. The listener closes what it accepts.
func bxStartBurst(b *testing.B, w *aio.Watcher) *bxBurst {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatalf("Listen = %v", err)
	}
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	bu := &bxBurst{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(bu.done)
		defer func() {
			ln.Close()
			<-accepted
		}()
		var ring [bxRing]net.Conn
		defer func() {
			for _, c := range ring {
				if c != nil {
					w.Free(c)
				}
			}
		}()
		d := net.Dialer{Timeout: stTimeout}
		for i := 0; i < bxMaxConns; i++ {
			select {
			case <-bu.quit:
				return
			default:
			}
			c, err := d.Dial("tcp", ln.Addr().String())
			if err != nil {
				b.Errorf("Dial = %v", err)
				return
			}
			if err := w.Read(nil, c, nil); err != nil {
				c.Close()
				b.Errorf("Read = %v", err)
				return
			}
			bu.conns.Add(1)
			if old := ring[i%bxRing]; old != nil {
				w.Free(old)
			}
			ring[i%bxRing] = c
		}
	}()
	return bu
}

// stop ends the burst and waits for its goroutines; the connections it
// still holds are freed.
func (bu *bxBurst) stop() {
	bu.stopOnce.Do(func() { close(bu.quit) })
	<-bu.done
}

// bxHist is a histogram of durations: 8 buckets per power of two of
// nanoseconds.
type bxHist struct{ n [64 * 8]int64 }

func (h *bxHist) add(d time.Duration) {
	ns := uint64(max(d, 1))
	e := bits.Len64(ns) - 1 // ns is in [2^e, 2^(e+1))
	sub := 0
	if e >= 3 {
		sub = int(ns>>(e-3)) & 7
	}
	h.n[e*8+sub]++
}

func (h *bxHist) merge(o *bxHist) {
	for i, v := range o.n {
		h.n[i] += v
	}
}

// quantile returns the upper bound, in nanoseconds, of the bucket that
// holds the q quantile.
func (h *bxHist) quantile(q float64) int64 {
	var total int64
	for _, v := range h.n {
		total += v
	}
	want := int64(q*float64(total) + 0.5)
	var seen int64
	for i, v := range h.n {
		seen += v
		if seen >= want && v > 0 {
			e, sub := i/8, i%8
			if e < 3 {
				return 1 << (e + 1)
			}
			return int64(8+sub+1) << (e - 3)
		}
	}
	return 0
}
