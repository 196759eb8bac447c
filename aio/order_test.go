//go:build unix

package aio_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// stSeq is the context of one request in the ordering tests.
type stSeq struct {
	conn int
	op   aio.OpType
	seq  int
}

// stSizes returns n sizes in [1, max], determined by seed.
func stSizes(seed uint64, n, max int) []int {
	g := stGen{s: seed}
	s := make([]int, n)
	for i := range s {
		s[i] = 1 + int(g.next()%uint64(max))
	}
	return s
}

// stPeerRead reads n bytes from c on a new goroutine; the result arrives on
// the returned channel. The read gives up after stTimeout.
func stPeerRead(c net.Conn, n int) <-chan []byte {
	ch := make(chan []byte, 1)
	c.SetReadDeadline(time.Now().Add(stTimeout))
	go func() { ch <- stReadNoFail(c, n) }()
	return ch
}

// stPeerStream writes stream to c in pieces of the given sizes, then closes
// its write side, on a new goroutine. The error arrives on the channel.
func stPeerStream(c net.Conn, stream []byte, sizes []int) <-chan error {
	ch := make(chan error, 1)
	c.SetWriteDeadline(time.Now().Add(stTimeout))
	go func() {
		for i := 0; len(stream) > 0; i++ {
			n := min(sizes[i%len(sizes)], len(stream))
			if _, err := c.Write(stream[:n]); err != nil {
				ch <- err
				return
			}
			stream = stream[n:]
		}
		ch <- c.(interface{ CloseWrite() error }).CloseWrite()
	}()
	return ch
}

func TestOrderWrites(t *testing.T) { backendtest.Run(t, testOrderWrites) }

func testOrderWrites(t *testing.T) {
	const n = 1000
	w := stWatcher(t, aio.Config{})
	c, peer := stTCPPair(t)
	col := stCollect(t, w)

	sizes := stSizes(1, n, 16<<10)
	var want []byte
	ctxs := make([]stSeq, n)
	total := 0
	for _, s := range sizes {
		total += s
	}
	got := stPeerRead(peer, total)
	for i, s := range sizes {
		buf := stPattern(uint64(i)+1, s)
		want = append(want, buf...)
		ctxs[i] = stSeq{op: aio.OpWrite, seq: i}
		if err := w.Write(&ctxs[i], c, buf); err != nil {
			t.Fatalf("Write #%d = %v, want nil", i, err)
		}
	}
	for i := range n {
		r := col.next(t)
		seq := r.Context.(*stSeq).seq
		if seq != i || r.Error != nil || r.Size != sizes[i] {
			t.Fatalf("completion %d = #%d, size %d, err %v, want #%d, %d, nil", i, seq, r.Size, r.Error, i, sizes[i])
		}
	}
	if b := <-got; !bytes.Equal(b, want) {
		t.Errorf("peer received %d bytes, not the %d bytes of the writes in order", len(b), len(want))
	}
}

func TestOrderReads(t *testing.T) { backendtest.Run(t, testOrderReads) }

func testOrderReads(t *testing.T) {
	const n, size, streamLen = 3000, 7, 3000
	w := stWatcher(t, aio.Config{})
	c, peer := stTCPPair(t)
	col := stCollect(t, w)

	backing := make([]byte, n*size)
	ctxs := make([]stSeq, n)
	for i := range n {
		ctxs[i] = stSeq{seq: i}
		if err := w.Read(&ctxs[i], c, backing[i*size:(i+1)*size:(i+1)*size]); err != nil {
			t.Fatalf("Read #%d = %v, want nil", i, err)
		}
	}
	stream := stPattern(99, streamLen)
	sent := stPeerStream(peer, stream, stSizes(2, 64, 50))

	var got []byte
	eofs := 0
	for i := range n {
		var r stResult
		select {
		case r = <-col.ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("read #%d: no completion within 5s; %d of %d bytes and %d EOFs so far, %d reads pending",
				i, len(got), streamLen, eofs, w.Stats().Total().PendingReads)
		}
		if seq := r.Context.(*stSeq).seq; seq != i {
			t.Fatalf("completion %d = #%d, want #%d", i, seq, i)
		}
		switch {
		case r.Error == io.EOF:
			if len(got) != streamLen {
				t.Fatalf("read #%d: EOF after %d bytes, want %d", i, len(got), streamLen)
			}
			eofs++
		case r.Error != nil || r.Size == 0:
			t.Fatalf("read #%d = %d, %v, want data", i, r.Size, r.Error)
		case eofs > 0:
			t.Fatalf("read #%d: data after EOF", i)
		default:
			got = append(got, r.Data...)
		}
	}
	if !bytes.Equal(got, stream) {
		t.Errorf("reads in completion order = %d bytes, not the %d-byte stream", len(got), len(stream))
	}
	if err := <-sent; err != nil {
		t.Errorf("peer write = %v, want nil", err)
	}
	t.Logf("%d reads with data, %d at EOF", n-eofs, eofs)
}

// Several goroutines, each on its own conn, over two loops: per conn and
// direction completions still come in submission order.
func TestOrderGoroutinesLoops2(t *testing.T) { backendtest.Run(t, testOrderGoroutinesLoops2) }

func testOrderGoroutinesLoops2(t *testing.T) {
	const g, writes, reads, rsize, streamLen = 8, 200, 400, 5, 400
	w := stWatcher(t, aio.Config{Loops: 2})
	col := stCollect(t, w)

	type side struct {
		c        net.Conn
		wsizes   []int
		want     []byte // what the writes put on the wire
		got      <-chan []byte
		stream   []byte // what the peer sends
		sent     <-chan error
		ctxs     []stSeq
		nextR    int
		nextW    int
		received []byte
		eof      bool
	}
	sides := make([]*side, g)
	for i := range sides {
		c, peer := stTCPPair(t)
		s := &side{c: c, wsizes: stSizes(uint64(i)+10, writes, 4<<10), ctxs: make([]stSeq, writes+reads)}
		s.stream = stPattern(uint64(i)+1000, streamLen)
		total := 0
		for _, n := range s.wsizes {
			total += n
		}
		s.got = stPeerRead(peer, total)
		s.sent = stPeerStream(peer, s.stream, stSizes(uint64(i), 16, 9))
		sides[i] = s
	}

	var wg sync.WaitGroup
	for i, s := range sides {
		wg.Go(func() {
			var wbufs [][]byte
			for k := range writes {
				wbufs = append(wbufs, stPattern(uint64(i)<<20|uint64(k), s.wsizes[k]))
				s.want = append(s.want, wbufs[k]...)
			}
			rbuf := make([]byte, reads*rsize)
			for k := range max(writes, reads) {
				if k < writes {
					s.ctxs[k] = stSeq{conn: i, op: aio.OpWrite, seq: k}
					if err := w.Write(&s.ctxs[k], s.c, wbufs[k]); err != nil {
						t.Errorf("conn %d: Write #%d = %v, want nil", i, k, err)
						return
					}
				}
				if k < reads {
					ctx := &s.ctxs[writes+k]
					*ctx = stSeq{conn: i, op: aio.OpRead, seq: k}
					if err := w.Read(ctx, s.c, rbuf[k*rsize:(k+1)*rsize:(k+1)*rsize]); err != nil {
						t.Errorf("conn %d: Read #%d = %v, want nil", i, k, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	for range g * (writes + reads) {
		r := col.next(t)
		ctx := r.Context.(*stSeq)
		s := sides[ctx.conn]
		next := &s.nextR
		if ctx.op == aio.OpWrite {
			next = &s.nextW
		}
		if ctx.seq != *next {
			t.Fatalf("conn %d %v: completion #%d, want #%d", ctx.conn, ctx.op, ctx.seq, *next)
		}
		*next++
		switch {
		case ctx.op == aio.OpWrite:
			if r.Error != nil || r.Size != s.wsizes[ctx.seq] {
				t.Fatalf("conn %d write #%d = %d, %v, want %d, nil", ctx.conn, ctx.seq, r.Size, r.Error, s.wsizes[ctx.seq])
			}
		case r.Error == io.EOF:
			s.eof = true
		case r.Error != nil || s.eof:
			t.Fatalf("conn %d read #%d = %d, %v (EOF seen: %v), want data", ctx.conn, ctx.seq, r.Size, r.Error, s.eof)
		default:
			s.received = append(s.received, r.Data...)
		}
	}
	for i, s := range sides {
		if !bytes.Equal(s.received, s.stream) {
			t.Errorf("conn %d: reads gave %d bytes, not the %d-byte stream", i, len(s.received), len(s.stream))
		}
		if b := <-s.got; !bytes.Equal(b, s.want) {
			t.Errorf("conn %d: peer received %d bytes, not the %d bytes of the writes in order", i, len(b), len(s.want))
		}
		if err := <-s.sent; err != nil {
			t.Errorf("conn %d: peer write = %v, want nil", i, err)
		}
	}
	if s := w.Stats(); s.Loops[0].Completions == 0 || s.Loops[1].Completions == 0 {
		t.Errorf("completions per loop = %d, %d, want both > 0", s.Loops[0].Completions, s.Loops[1].Completions)
	}
}

// End of file queued behind the last data is reported even when the read
// that takes the last data is short and the readiness edge that announced
// the FIN was consumed before it.
func TestOrderEOFAfterShortRead(t *testing.T) { backendtest.Run(t, testOrderEOFAfterShortRead) }

func testOrderEOFAfterShortRead(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  aio.Config
		buf  int // 0: nil buffer (swap)
		data int
	}{
		{"UserBuffer", aio.Config{}, 7, 10},
		{"SwapBuffer", aio.Config{BufferSize: 4096}, 0, 6000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := stWatcher(t, tc.cfg)
			c, peer := stSocketPair(t)
			col := stCollect(t, w)
			data := stPattern(5, tc.data)
			stWrite(t, peer, data)
			if err := peer.(*net.UnixConn).CloseWrite(); err != nil {
				t.Fatalf("CloseWrite = %v, want nil", err)
			}
			// One read at a time, the next submitted after the previous
			// completed: the first takes a full buffer, the second the
			// short rest, the third must see EOF.
			var got []byte
			for i := 0; ; i++ {
				var buf []byte
				if tc.buf > 0 {
					buf = make([]byte, tc.buf)
				}
				if err := w.Read(nil, c, buf); err != nil {
					t.Fatalf("Read #%d = %v, want nil", i, err)
				}
				r := col.nextWithin(t, 5*time.Second)
				if r.Error == io.EOF {
					break
				}
				if r.Error != nil {
					t.Fatalf("Read #%d = %v, want data or EOF", i, r.Error)
				}
				got = append(got, r.Data...)
				t.Logf("read #%d: %d bytes", i, r.Size)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("reads = %d bytes, want the %d bytes sent", len(got), len(data))
			}
		})
	}
}
