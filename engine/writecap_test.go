package engine_test

import (
	"bytes"
	"errors"
	"net"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestWriteAfterBufferFull checks that once a Write failed with
// ErrWriteBufferFull every later Write fails with net.ErrClosed, even
// before the loop has closed the connection: a Write that succeeded then
// would put its bytes after a hole in the stream. The Writes run in one
// callback, so the close the failure asks for cannot come between them.
// Before the fix the second Write succeeded.
func TestWriteAfterBufferFull(t *testing.T) { backendtest.Run(t, testWriteAfterBufferFull) }

func testWriteAfterBufferFull(t *testing.T) {
	const limit = 256 << 10
	h := etNewHandler()
	_, c, peer := etServe(t, h, engine.Options{Loops: 1, MaxWriteBuffer: limit, WriteHighWater: limit / 2}, "tcp")
	etSmallReadBuffer(peer)
	var full, after error
	etDo(t, c, func(c *engine.Conn) {
		for range 1024 { // 64 MiB at most
			if _, full = c.Write(etChunk64K); full != nil {
				break
			}
		}
		_, after = c.Write([]byte("after the hole"))
	})
	if !errors.Is(full, engine.ErrWriteBufferFull) {
		t.Fatalf("filling a queue the peer never reads: Write = %v, want ErrWriteBufferFull", full)
	}
	if !errors.Is(after, net.ErrClosed) {
		t.Errorf("Write after ErrWriteBufferFull = %v, want an error matching net.ErrClosed", after)
	}
	if ev := etClosed(t, h); !errors.Is(ev.err, engine.ErrWriteBufferFull) {
		t.Errorf("OnClose error = %v, want ErrWriteBufferFull", ev.err)
	}
}

// TestWriteLargerThanMaxWriteBuffer checks that MaxWriteBuffer caps the
// backlog, not one Write: a 20 MiB reply to a reader that keeps up is
// taken whole under the 16 MiB default and arrives intact. Before, the
// Write failed with ErrWriteBufferFull.
func TestWriteLargerThanMaxWriteBuffer(t *testing.T) {
	backendtest.Run(t, testWriteLargerThanMaxWriteBuffer)
}

func testWriteLargerThanMaxWriteBuffer(t *testing.T) {
	h := etNewHandler()
	_, c, peer := etServe(t, h, engine.Options{}, "tcp")
	reply := bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)
	got := etDrain(peer)
	if n, err := c.Write(reply); n != len(reply) || err != nil {
		t.Fatalf("Write(20 MiB) = %d, %v; want %d, nil", n, err, len(reply))
	}
	c.Close()
	if b := <-got; !bytes.Equal(b, reply) {
		t.Fatalf("the peer read %d bytes, want the %d written, in order", len(b), len(reply))
	}
}

// TestMaxWriteBufferBelowHighWater checks that a MaxWriteBuffer below the
// default WriteHighWater is honoured (it used to be raised to the high
// water mark: a 256 KiB cap failed only at 1 MiB queued), and that New
// rejects options whose WriteHighWater exceeds their MaxWriteBuffer.
func TestMaxWriteBufferBelowHighWater(t *testing.T) {
	backendtest.Run(t, testMaxWriteBufferBelowHighWater)
}

func testMaxWriteBufferBelowHighWater(t *testing.T) {
	const limit = 256 << 10
	if e, err := engine.New(etNewHandler(), engine.Options{MaxWriteBuffer: limit, WriteHighWater: 4 * limit}); err == nil {
		e.Stop()
		t.Errorf("New with WriteHighWater above MaxWriteBuffer: nil error, want one")
	}
	h := etNewHandler()
	_, c, peer := etServe(t, h, engine.Options{Loops: 1, MaxWriteBuffer: limit}, "tcp")
	etSmallReadBuffer(peer)
	most := 0
	var err error
	etDo(t, c, func(c *engine.Conn) {
		for range 1024 {
			if _, err = c.Write(etChunk64K); err != nil {
				break
			}
			most = max(most, c.OutboundBuffered())
		}
	})
	if !errors.Is(err, engine.ErrWriteBufferFull) {
		t.Fatalf("Write = %v, want ErrWriteBufferFull", err)
	}
	if most >= limit+len(etChunk64K) {
		t.Errorf("%d bytes were queued under a MaxWriteBuffer of %d (Writes of %d)", most, limit, len(etChunk64K))
	}
	etClosed(t, h)
}
