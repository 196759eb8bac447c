package netconn_test

import (
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// The storms of this file keep a stream flowing while deadlines expire
// all the time, or close conns at random moments, and check that no byte
// is lost, doubled or misplaced and that no call hangs.

// stormSize is the stream each storm moves.
const stormSize = 8 << 20

// stormLimit bounds a storm.
const stormLimit = time.Minute

// TestReadDeadlineStorm: the reader sets a deadline of 0 to 500 µs
// before every Read while the peer writes in random pieces with random
// pauses; most Reads time out (with n == 0), and the stream arrives
// intact.
func TestReadDeadlineStorm(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		wrote := make(chan error, 1)
		go func() { wrote <- jerkyWrite(b, 11, stormSize, rand.New(rand.NewPCG(1, 2))) }()
		rng := rand.New(rand.NewPCG(3, 4))
		chk := newChecker(11)
		buf := make([]byte, 32<<10)
		start := time.Now()
		timeouts, reads := 0, 0
		for time.Since(start) < stormLimit {
			a.SetReadDeadline(time.Now().Add(time.Duration(rng.IntN(500)) * time.Microsecond))
			n, err := a.Read(buf[:1+rng.IntN(len(buf))])
			reads++
			if _, werr := chk.Write(buf[:n]); werr != nil {
				t.Fatalf("after %d reads, %d timeouts: %v", reads, timeouts, werr)
			}
			if err == io.EOF {
				break
			}
			if isTimeout(err) {
				timeouts++
				if n != 0 {
					t.Fatalf("Read timed out with n = %d, want 0", n)
				}
				continue
			}
			if err != nil {
				t.Fatalf("Read after %d bytes: %v", chk.off, err)
			}
		}
		if err := chk.check(stormSize); err != nil {
			t.Errorf("%v (%d reads, %d timeouts)", err, reads, timeouts)
		}
		if err := <-wrote; err != nil {
			t.Errorf("peer: %v", err)
		}
		t.Logf("%d reads, %d timed out", reads, timeouts)
	})
}

// jerkyWrite writes n bytes of stream seed to c in random pieces with
// random pauses, then closes c's sending side.
func jerkyWrite(c *netconn.Conn, seed uint64, n int64, rng *rand.Rand) error {
	r := newPattern(seed, n)
	buf := make([]byte, 64<<10)
	c.SetWriteDeadline(time.Now().Add(stormLimit))
	for {
		k, err := r.Read(buf[:1+rng.IntN(len(buf))])
		if err == io.EOF {
			return c.CloseWrite()
		}
		if _, err := c.Write(buf[:k]); err != nil {
			return err
		}
		if rng.IntN(2) == 0 {
			time.Sleep(time.Duration(rng.IntN(500)) * time.Microsecond)
		}
	}
}

// TestWriteDeadlineStorm: the writer sets a deadline of 0 to 2 ms before
// every Write of up to 256 KiB while the peer reads in random pieces with
// random pauses; after a timeout the writer goes on from the count Write
// returned, so the peer's stream is intact only if every timed-out
// Write's count is exactly what it sent.
func TestWriteDeadlineStorm(t *testing.T) {
	eachStream(t, func(t *testing.T, a, b *netconn.Conn) {
		data := make([]byte, stormSize)
		fillPattern(data, 12, 0)
		read := make(chan error, 1)
		go func() { read <- jerkyRead(b, 12, stormSize, rand.New(rand.NewPCG(5, 6))) }()
		rng := rand.New(rand.NewPCG(7, 8))
		start := time.Now()
		off, timeouts, writes := 0, 0, 0
		for off < len(data) && time.Since(start) < stormLimit {
			a.SetWriteDeadline(time.Now().Add(time.Duration(rng.IntN(2000)) * time.Microsecond))
			n, err := a.Write(data[off:min(len(data), off+1+rng.IntN(256<<10))])
			writes++
			off += n
			if isTimeout(err) {
				timeouts++
				continue
			}
			if err != nil {
				t.Fatalf("Write at %d: %v", off, err)
			}
		}
		if off < len(data) {
			t.Fatalf("wrote %d of %d bytes in %v", off, len(data), stormLimit)
		}
		a.CloseWrite()
		if err := <-read; err != nil {
			t.Errorf("%v (%d writes, %d timeouts)", err, writes, timeouts)
		}
		t.Logf("%d writes, %d timed out", writes, timeouts)
	})
}

// jerkyRead reads c to its end in random pieces with random pauses and
// checks it is n bytes of stream seed.
func jerkyRead(c *netconn.Conn, seed uint64, n int64, rng *rand.Rand) error {
	chk := newChecker(seed)
	buf := make([]byte, 64<<10)
	c.SetReadDeadline(time.Now().Add(stormLimit))
	for {
		k, err := c.Read(buf[:1+rng.IntN(len(buf))])
		if _, werr := chk.Write(buf[:k]); werr != nil {
			return werr
		}
		if err == io.EOF {
			return chk.check(n)
		}
		if err != nil {
			return err
		}
		if rng.IntN(4) == 0 {
			time.Sleep(time.Duration(rng.IntN(1000)) * time.Microsecond)
		}
	}
}

// TestCloseStorm closes conns at random moments while a Read and a Write
// are starting or parked: both end with net.ErrClosed (or the Write,
// having finished, with nil), within the hang limit.
func TestCloseStorm(t *testing.T) {
	big := make([]byte, blockSize)
	backendtest.Run(t, func(t *testing.T) {
		for _, network := range streamNetworks {
			t.Run(network, func(t *testing.T) {
				rng := rand.New(rand.NewPCG(9, 10))
				for i := range 50 {
					a, b := connPair(t, network)
					rch := goRead(a, make([]byte, 16))
					wch := goWrite(a, big[:1+rng.IntN(len(big))])
					time.Sleep(time.Duration(rng.IntN(2000)) * time.Microsecond)
					a.Close()
					r := await(t, "Read", rch, hang)
					if !errors.Is(r.err, net.ErrClosed) {
						t.Errorf("round %d: Read = %d, %v; want net.ErrClosed", i, r.n, r.err)
					}
					w := await(t, "Write", wch, hang)
					if w.err != nil && !errors.Is(w.err, net.ErrClosed) {
						t.Errorf("round %d: Write = %d, %v; want nil or net.ErrClosed", i, w.n, w.err)
					}
					b.Close()
				}
			})
		}
	})
}
