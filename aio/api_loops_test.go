package aio_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
)

// seqCtx names one request: the conn's index and its place in the
// conn's sequence for that direction.
type seqCtx struct{ conn, seq int }

// frame is the seq'th message of conn i: sizes differ, so a read that
// took bytes from the wrong frame would not match. Every fourth is larger
// than the socket buffers and the echo server's swap chunks.
func frame(i, seq int) []byte {
	n := 100 + 37*seq
	if seq%4 == 3 {
		n = 200<<10 + seq
	}
	b := bytes.Repeat([]byte{byte('a' + seq)}, n)
	b[0], b[1] = byte(i), byte(seq)
	return b
}

// TestLoopsOrder: with two loops, many conns each with several writes and
// full reads in flight get every completion in submission order per conn
// and direction, and the conns are spread over both loops.
func TestLoopsOrder(t *testing.T) { backendtest.Run(t, testLoopsOrder) }

func testLoopsOrder(t *testing.T) {
	const (
		conns = 64
		depth = 8
	)
	addr := startEchoServer(t)
	w := newWatcher(t, aio.Config{Loops: 2})
	col := collect(t, w)
	cs := make([]net.Conn, conns)
	var total uint64
	for i := range cs {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("Dial = %v", err)
		}
		closeAtCleanup(t, c)
		cs[i] = c
	}
	for i, c := range cs {
		for seq := range depth {
			f := frame(i, seq)
			total += uint64(len(f))
			if err := w.Write(seqCtx{i, seq}, c, f); err != nil {
				t.Fatalf("Write = %v", err)
			}
			if err := w.ReadFull(seqCtx{i, seq}, c, make([]byte, len(f)), time.Time{}); err != nil {
				t.Fatalf("ReadFull = %v", err)
			}
		}
	}
	next := map[aio.OpType][]int{aio.OpRead: make([]int, conns), aio.OpWrite: make([]int, conns)}
	for _, r := range waitResults(t, col, 2*conns*depth) {
		ctx, ok := r.Context.(seqCtx)
		if !ok || r.Error != nil {
			t.Fatalf("completion %v, want a seqCtx and no error", r)
		}
		if r.Conn != cs[ctx.conn] {
			t.Errorf("completion of conn %d came with another conn", ctx.conn)
		}
		if want := next[r.Operation][ctx.conn]; ctx.seq != want {
			t.Errorf("conn %d: %v completion %d arrived when %d was next", ctx.conn, r.Operation, ctx.seq, want)
		}
		next[r.Operation][ctx.conn] = ctx.seq + 1
		if f := frame(ctx.conn, ctx.seq); r.Size != len(f) || (r.Operation == aio.OpRead && !bytes.Equal(r.Data, f)) {
			t.Errorf("conn %d: %v %d = %d bytes %.8q, want frame %d (%d bytes)", ctx.conn, r.Operation, ctx.seq, r.Size, r.Data, ctx.seq, len(f))
		}
	}
	w.Poke()
	s := w.Stats()
	if len(s.Loops) != 2 {
		t.Fatalf("len(Stats().Loops) = %d, want 2", len(s.Loops))
	}
	for i, l := range s.Loops {
		// Conns are spread over the loops in turn.
		if l.Conns != conns/2 || l.Completions != conns/2*2*depth {
			t.Errorf("loop %d: %+v, want %d conns, %d completions", i, l, conns/2, conns/2*2*depth)
		}
	}
	if tot := s.Total(); tot.BytesRead != total || tot.BytesWritten != total || tot.PendingReads != 0 || tot.PendingWrites != 0 {
		t.Errorf("Stats().Total() = %+v, want %d bytes each way, nothing pending", tot, total)
	}
}
