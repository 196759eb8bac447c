//go:build unix

package aio_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"testing"

	"github.com/galeio/gale/aio"
)

// stID identifies a connection in a request's context.
type stID struct{ i int }

// stSwapPairs returns n socket pairs: the watcher's ends and the peers.
func stSwapPairs(t *testing.T, n int) (conns, peers []net.Conn, ids []*stID) {
	for i := range n {
		c, p := stSocketPair(t)
		conns, peers, ids = append(conns, c), append(peers, p), append(ids, &stID{i})
	}
	return conns, peers, ids
}

// stSwapMsg is the 1 KiB message peer i sends in round k.
func stSwapMsg(i, k int) []byte { return stPattern(uint64(i)<<16|uint64(k)+1, 1024) }

// stCheckSwapBytes fails if w's swap memory exceeds its bound.
func stCheckSwapBytes(t *testing.T, w *aio.Watcher, bound int) {
	t.Helper()
	if got := w.Stats().Total().SwapBytes; got > bound {
		t.Fatalf("SwapBytes = %d, want <= %d (Loops × SwapChunks × BufferSize)", got, bound)
	}
}

// Swap-buffer bytes handed out by WaitIO stay intact until the next WaitIO
// call, however many nil-buffer reads complete in the meantime.
func TestSwapHeldUntilNextWaitIO(t *testing.T) { backendtest.Run(t, testSwapHeldUntilNextWaitIO) }

func testSwapHeldUntilNextWaitIO(t *testing.T) {
	const n, rounds, bufSize, chunks = 32, 6, 16 << 10, 2
	w := stWatcher(t, aio.Config{BufferSize: bufSize, SwapChunks: chunks, Loops: 1})
	fired := stWatchdog(t, stTimeout, w)
	conns, peers, ids := stSwapPairs(t, n)

	round := make([]int, n)
	for i := range n {
		stWrite(t, peers[i], stSwapMsg(i, 0))
		if err := w.Read(ids[i], conns[i], nil); err != nil {
			t.Fatalf("Read = %v, want nil", err)
		}
	}
	type held struct {
		buf, want []byte
		id        int
	}
	var holds []held
	for received := 0; received < n*rounds; {
		res, err := w.WaitIO()
		if err != nil {
			t.Fatalf("WaitIO() = %v, want nil (watchdog fired: %v)", err, fired())
		}
		holds = holds[:0]
		for _, r := range res {
			id := r.Context.(*stID).i
			want := stSwapMsg(id, round[id])
			if r.Operation != aio.OpRead || r.Error != nil || !r.IsSwapBuffer || len(r.Buffer) != r.Size {
				t.Fatalf("conn %d: op %v err %v swap %v len %d size %d, want a swap read", id, r.Operation, r.Error, r.IsSwapBuffer, len(r.Buffer), r.Size)
			}
			if !bytes.Equal(r.Buffer, want) {
				t.Fatalf("conn %d round %d: %d bytes differ from the 1 KiB message", id, round[id], r.Size)
			}
			holds = append(holds, held{r.Buffer, want, id})
			received++
			round[id]++
			if round[id] < rounds {
				stWrite(t, peers[id], stSwapMsg(id, round[id]))
				if err := w.Read(ids[id], conns[id], nil); err != nil {
					t.Fatalf("Read = %v, want nil", err)
				}
			}
		}
		// More nil reads complete (as far as the swap allows) while this
		// batch is still held.
		stSettle(w)
		stCheckSwapBytes(t, w, chunks*bufSize)
		for _, h := range holds {
			if !bytes.Equal(h.buf, h.want) {
				t.Fatalf("conn %d: swap bytes changed before the next WaitIO call", h.id)
			}
		}
	}
	if got, want := w.Stats().Total().BytesRead, uint64(n*rounds*1024); got != want {
		t.Errorf("BytesRead = %d, want %d", got, want)
	}
}

// A nil-buffer read waits for swap space rather than take a sliver of it:
// every 1 KiB message arrives whole even when only two 4 KiB chunks exist.
func TestSwapNeverShrinks(t *testing.T) { backendtest.Run(t, testSwapNeverShrinks) }

func testSwapNeverShrinks(t *testing.T) {
	const n, bufSize, chunks = 64, 4096, 2
	w := stWatcher(t, aio.Config{BufferSize: bufSize, SwapChunks: chunks, Loops: 1})
	fired := stWatchdog(t, stTimeout, w)
	conns, peers, ids := stSwapPairs(t, n)

	for i := range n {
		if err := w.Read(ids[i], conns[i], nil); err != nil {
			t.Fatalf("Read = %v, want nil", err)
		}
	}
	for i := range n {
		stWrite(t, peers[i], stSwapMsg(i, 0))
	}
	seen := make([]bool, n)
	total, batches := 0, 0
	for received := 0; received < n; {
		res, err := w.WaitIO()
		if err != nil {
			t.Fatalf("WaitIO() = %v after %d of %d reads, want nil (watchdog fired: %v)", err, received, n, fired())
		}
		batches++
		stCheckSwapBytes(t, w, chunks*bufSize)
		for _, r := range res {
			id := r.Context.(*stID).i
			if r.Error != nil || r.Size != 1024 {
				t.Errorf("conn %d: read = %d bytes, %v, want 1024, nil", id, r.Size, r.Error)
			}
			if seen[id] {
				t.Errorf("conn %d: second completion", id)
			}
			seen[id] = true
			if !bytes.Equal(r.Buffer[:r.Size], stSwapMsg(id, 0)[:r.Size]) {
				t.Errorf("conn %d: data differs from the message", id)
			}
			total += r.Size
			received++
		}
	}
	if total != n*1024 {
		t.Errorf("bytes received = %d, want %d", total, n*1024)
	}
	t.Logf("%d reads in %d batches", n, batches)
}

// While nobody calls WaitIO, swap exhaustion parks nil-buffer reads only:
// writes from caller buffers on other conns still complete, and the swap
// memory stays within Loops × SwapChunks × BufferSize.
func TestSwapSlowConsumer(t *testing.T) { backendtest.Run(t, testSwapSlowConsumer) }

func testSwapSlowConsumer(t *testing.T) {
	const loops, chunks, bufSize = 2, 2, 4096
	const readers, writers, wsize = 16, 8, 32 << 10
	w := stWatcher(t, aio.Config{BufferSize: bufSize, SwapChunks: chunks, Loops: loops})
	fired := stWatchdog(t, stTimeout, w)
	bound := loops * chunks * bufSize

	rconns, rpeers, rids := stSwapPairs(t, readers)
	for i := range readers {
		stWrite(t, rpeers[i], stSwapMsg(i, 0))
		if err := w.Read(rids[i], rconns[i], nil); err != nil {
			t.Fatalf("Read = %v, want nil", err)
		}
	}
	w.Poke() // every read has reached its loop: PendingReads counts it
	wconns, wpeers, _ := stSwapPairs(t, writers)
	got := make(chan []byte, writers)
	for i := range writers {
		go func() { got <- stReadNoFail(wpeers[i], wsize) }()
		if err := w.Write(nil, wconns[i], stSwapMsg(100+i, 0)[:1]); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
		if err := w.Write(nil, wconns[i], stPattern(uint64(i), wsize-1)); err != nil {
			t.Fatalf("Write = %v, want nil", err)
		}
	}

	// One 1 KiB read fills a 4 KiB chunk (the next read needs 4 KiB), so
	// exactly Loops × SwapChunks reads complete; the rest wait.
	want := readers - loops*chunks
	stWaitFor(t, w, "writes done, reads parked", func() bool {
		s := w.Stats().Total()
		if s.PendingReads < want {
			t.Fatalf("PendingReads = %d with no WaitIO call, want >= %d", s.PendingReads, want)
		}
		stCheckSwapBytes(t, w, bound)
		return s.PendingWrites == 0 && s.PendingReads == want
	})
	for i := range writers {
		if b := <-got; len(b) != wsize {
			t.Errorf("peer %d read %d bytes, want %d", i, len(b), wsize)
		}
	}
	stSettle(w)
	if s := w.Stats().Total(); s.PendingReads != want || s.SwapBytes != bound {
		t.Errorf("after settling: PendingReads = %d, SwapBytes = %d, want %d, %d", s.PendingReads, s.SwapBytes, want, bound)
	}

	reads, writes := 0, 0
	for reads < readers || writes < 2*writers {
		res, err := w.WaitIO()
		if err != nil {
			t.Fatalf("WaitIO() = %v with %d reads, %d writes done, want nil (watchdog fired: %v)", err, reads, writes, fired())
		}
		stCheckSwapBytes(t, w, bound)
		for _, r := range res {
			if r.Error != nil {
				t.Errorf("op %v: %v, want nil", r.Operation, r.Error)
			}
			if r.Operation == aio.OpWrite {
				writes++
				continue
			}
			id := r.Context.(*stID).i
			if r.Size != 1024 || !bytes.Equal(r.Buffer, stSwapMsg(id, 0)) {
				t.Errorf("conn %d: read %d bytes, want its 1 KiB message", id, r.Size)
			}
			reads++
		}
	}
}

// stReadNoFail reads n bytes from c, from any goroutine; it returns what it
// got before an error.
func stReadNoFail(c net.Conn, n int) []byte {
	b := make([]byte, n)
	got := 0
	for got < n {
		m, err := c.Read(b[got:])
		got += m
		if err != nil {
			break
		}
	}
	return b[:got]
}
