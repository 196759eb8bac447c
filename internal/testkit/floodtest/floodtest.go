// Package floodtest is the hostile-client test of the line-protocol
// examples (engine-redis, engine-http): a client that sends bytes and
// never a newline. The server must refuse the line once it passes its
// cap and close the connection, keeping its memory bounded, while
// well-behaved clients go on at their pace: Run checks that they are
// served, Bench measures how fast. For tests only.
package floodtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/leaktest"
)

const (
	// floodCI and floodLong are what one hostile connection tries to
	// send: 64 MiB by default, 1 GiB with GALE_LONG=1. The server must cut
	// it off long before.
	floodCI, floodLong = 64 << 20, 1 << 30
	// floodBudgetCI and floodBudgetLong are what the hostile connections
	// beside the well-behaved ones send in all: 32 MiB by default (two
	// seconds at floodRate), 1 GiB with GALE_LONG=1.
	floodBudgetCI, floodBudgetLong = 32 << 20, 1 << 30
	// floodSent bounds what the hostile client gets to write before its
	// writes fail: the server's line cap, a read buffer, and the kernel's socket
	// buffers on both ends (tcp_wmem and tcp_rmem grow to a few MiB).
	floodSent = 16 << 20
	// lingerDrop is what a closing engine connection reads and drops
	// while it waits for its peer's end, at most (engine's
	// Options.CloseLinger): 256 KiB and the receive that passes them (up
	// to io_uring's 96 KiB). It is read, not held.
	lingerDrop = 256<<10 + 96<<10
	// floodHeap bounds the heap growth at any moment of the test (live
	// objects and garbage not yet collected), far under what is sent:
	// the line cap and a read buffer per hostile connection, and what io_uring
	// spills of a connection closing (up to 64 KiB and a batch of its
	// buffer ring), as garbage between collections. The runtime lets the
	// heap grow to 4 MiB before it collects, and on while it collects: the
	// long run saw +8.6 MiB once over 4,763 floods (engine-http, io_uring,
	// -race).
	floodHeap = 16 << 20
	// floodRest bounds the heap the floods may leave behind once their
	// connections are gone (after a collection).
	floodRest = 1 << 20
	// floodRounds is the fewest rounds of the well-behaved clients run
	// alone and beside the hostile ones.
	floodRounds = 10
	// floodRate is the pace of the hostile clients that run beside the
	// well-behaved ones, as a client on a network sends at the network's
	// pace. They share the test's two cores: at 32 MiB/s, flooding a
	// goroutine-per-connection std net server instead of this one cost the
	// well-behaved clients as much (down to 0.74 of their throughput with
	// io_uring under -race), which measured the machine, not the server;
	// at 16 MiB/s that control stays above 0.9.
	floodRate = 16 << 20
	// dialTimeout bounds a hostile connection's whole life.
	dialTimeout = 10 * time.Second
)

// Target is the server under attack and what it must do.
type Target struct {
	Addr    net.Addr
	BytesIn func() uint64 // the bytes the server has read so far
	Cap     int           // the line cap (bytes)
	CapName string        // its name, for messages: "maxInline"
	// Refused reports whether reply is the server's whole refusal of the
	// line; Want describes it, for messages: "a 431 response".
	Refused func(reply []byte) bool
	Want    string
	// Good runs one round of the well-behaved clients, each bounded
	// (a failure fails t), and returns their throughput in Unit per
	// second; Clients is how many they are.
	Good    func(t testing.TB) float64
	Unit    string
	Clients int
}

// Run sends the server a line that never ends, up to floodCI bytes
// (floodLong with GALE_LONG=1). It checks that the server refuses it
// (tg.Refused) after reading about tg.Cap bytes and closes the connection,
// so the client's writes fail well before the end. Then hostile clients
// do the same one after another, floodBudgetCI bytes in all
// (floodBudgetLong), beside the well-behaved ones, whose rounds
// (tg.Good) must go on being served. All along the heap must grow by at
// most floodHeap, and come back to within floodRest of where it was.
//
// How fast the well-behaved clients are served beside the floods is
// logged, not checked: it measures the machine's load as much as the
// server. Bench measures it.
func Run(t *testing.T, tg Target) {
	t.Helper()
	amount, budget := int64(floodCI), int64(floodBudgetCI)
	if os.Getenv("GALE_LONG") == "1" {
		amount, budget = floodLong, floodBudgetLong
	}
	base := heapAfterGC()
	peak := leaktest.Peaks(t, leaktest.HeapNow)

	in0 := tg.BytesIn()
	f := flood(tg.Addr, amount, nil)
	read := tg.BytesIn() - in0
	t.Logf("one hostile conn: wrote %d of %d bytes before %v; the server read %d bytes (%s %d) and replied %.40q",
		f.sent, amount, f.writeErr, read, tg.CapName, tg.Cap, f.reply)
	checkFlood(t, tg, f, amount)
	if limit := uint64(tg.Cap + 64<<10 + lingerDrop); read > limit {
		t.Errorf("the server read %d bytes of the unending line, want at most %d (%s, a read buffer and the close's linger)", read, limit, tg.CapName)
	}

	alone, beside, floods, sent := floodThroughput(t, tg, amount, budget)
	heapPeak := peak()[0] - base
	heapRest := heapAfterGC() - base
	t.Logf("%d well-behaved conns: %.0f %s/s alone, %.0f beside %d hostile conns sending %d MiB in all at %d MiB/s (%d rounds each); heap %.1f MiB at rest, peak +%.1f MiB, after the floods %+.2f MiB",
		tg.Clients, median(alone), tg.Unit, median(beside), floods, sent>>20, floodRate>>20, len(beside),
		float64(base)/(1<<20), float64(heapPeak)/(1<<20), float64(heapRest)/(1<<20))
	if heapRest > floodRest {
		t.Errorf("heap after the floods = %d bytes more than before, want at most %d: the hostile conns left memory behind", heapRest, floodRest)
	}
	if heapPeak > floodHeap {
		t.Errorf("heap grew by %d bytes at its peak while %d-byte floods were sent, want at most %d", heapPeak, amount, floodHeap)
	}
}

// floodThroughput runs the well-behaved clients' rounds alone and beside
// hostile clients that flood the server one after another at floodRate,
// each trying to send amount bytes, interleaving the two, for floodRounds
// rounds and until the hostile clients have sent budget bytes in all, or
// a round fails t. It returns the rates, the hostile connections and the
// bytes they sent.
func floodThroughput(t *testing.T, tg Target, amount, budget int64) (alone, beside []float64, floods int, sent int64) {
	t.Helper()
	for (len(beside) < floodRounds || sent < budget) && !t.Failed() {
		alone = append(alone, tg.Good(t))
		p := &pacer{rate: floodRate, start: time.Now(), stop: make(chan struct{})}
		done := make(chan int, 1)
		go func() { done <- attack(t, tg, amount, p) }()
		beside = append(beside, tg.Good(t))
		close(p.stop)
		n, err := awaitAttack(done)
		if err != nil {
			t.Fatal(err)
		}
		floods += n
		sent += p.sent
	}
	return alone, beside, floods, sent
}

// awaitAttack waits for the hostile clients of a round to end, once
// their pacer is stopped: at most dialTimeout, the life of one.
func awaitAttack(done chan int) (int, error) {
	select {
	case n := <-done:
		return n, nil
	case <-time.After(dialTimeout + 5*time.Second):
		return 0, fmt.Errorf("the hostile clients still ran %v after they were stopped", dialTimeout+5*time.Second)
	}
}

// Bench measures what Run logs: tg.Good's rounds alone, or, flooded,
// beside hostile clients flooding the server at floodRate. One op is one
// round, tg.Clients clients each running its round trips; the rate is
// reported in tg.Unit per second (median of the rounds). Callers name
// the two sub-benchmarks Alone and Flooded, with the backend last.
func Bench(b *testing.B, tg Target, flooded bool) {
	var p *pacer
	done := make(chan int, 1)
	if flooded {
		p = &pacer{rate: floodRate, start: time.Now(), stop: make(chan struct{})}
		go func() { done <- attack(b, tg, floodCI, p) }()
	}
	var rates []float64
	for b.Loop() {
		rates = append(rates, tg.Good(b))
	}
	b.StopTimer()
	b.ReportMetric(median(rates), tg.Unit+"/s")
	if p != nil {
		close(p.stop)
		if _, err := awaitAttack(done); err != nil {
			b.Fatal(err)
		}
	}
}

// attack floods addr from one hostile connection after another, each
// trying to send amount bytes, until p is stopped. It returns the number
// of connections the server cut off.
func attack(t testing.TB, tg Target, amount int64, p *pacer) int {
	for n := 0; ; n++ {
		f := flood(tg.Addr, amount, p)
		if f.stopped {
			return n
		}
		if !f.ok(tg, amount) {
			t.Errorf("hostile conn %d: %v", n, f)
			return n
		}
	}
}

// pacer spreads writes at rate bytes per second from start, until stop
// is closed.
type pacer struct {
	rate  int64
	start time.Time
	sent  int64
	stop  chan struct{}
}

// wait blocks until n more bytes may be sent, and reports false if the
// pacer was stopped instead. A nil pacer never waits.
func (p *pacer) wait(n int) bool {
	if p == nil {
		return true
	}
	due := p.start.Add(time.Duration(float64(p.sent) / float64(p.rate) * float64(time.Second)))
	select {
	case <-p.stop:
		return false
	case <-time.After(time.Until(due)):
	}
	p.sent += int64(n)
	return true
}

// floodResult is what a hostile client saw.
type floodResult struct {
	stopped  bool  // the pacer stopped the flood before the server did
	sent     int64 // bytes written before a write failed
	writeErr error
	reply    []byte
	readErr  error // what ended the reply: EOF or a reset
}

func (f floodResult) String() string {
	return fmt.Sprintf("wrote %d bytes, then %v; read %q, then %v", f.sent, f.writeErr, f.reply, f.readErr)
}

// ok reports whether the server cut the flood off in time, with its
// refusal.
func (f floodResult) ok(tg Target, amount int64) bool {
	return f.writeErr != nil && f.sent < min(amount, floodSent) && tg.Refused(f.reply) &&
		(f.readErr == nil || errors.Is(f.readErr, syscall.ECONNRESET))
}

func checkFlood(t *testing.T, tg Target, f floodResult, amount int64) {
	t.Helper()
	if !f.ok(tg, amount) {
		t.Errorf("flood of %d bytes without a newline: %v; want the writes to fail within %d bytes, %s, then EOF or a reset",
			amount, f, floodSent, tg.Want)
	}
}

// flood dials addr and sends up to amount bytes of 'x', never a newline,
// at the pace of p, while it reads what the server replies, until the
// server closes.
func flood(addr net.Addr, amount int64, p *pacer) floodResult {
	c, err := net.DialTimeout("tcp", addr.String(), dialTimeout)
	if err != nil {
		return floodResult{writeErr: err}
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(dialTimeout))
	type reply struct {
		b   []byte
		err error
	}
	replied := make(chan reply, 1)
	go func() {
		b, err := io.ReadAll(c)
		replied <- reply{b, err}
	}()
	var f floodResult
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	for f.sent < amount && f.writeErr == nil {
		b := chunk[:min(int64(len(chunk)), amount-f.sent)]
		if !p.wait(len(b)) {
			f.stopped = true
			c.Close() // ends the reply's read
			break
		}
		var n int
		n, f.writeErr = c.Write(b)
		f.sent += int64(n)
	}
	r := <-replied
	f.reply, f.readErr = r.b, r.err
	return f
}

// median returns the median of v, 0 if v is empty.
func median(v []float64) float64 {
	s := slices.Sorted(slices.Values(v))
	if len(s) == 0 {
		return 0
	}
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// heapAfterGC returns the heap bytes in live objects.
func heapAfterGC() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
