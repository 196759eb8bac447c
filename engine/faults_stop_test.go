package engine_test

// Stop with thousands of connections that each have a receive pending,
// and many with output queued for peers that do not read.

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// etCountHandler counts its connections' opens and closes, for tests with
// more connections than etHandler's reports hold.
type etCountHandler struct {
	engine.BaseHandler
	mu      sync.Mutex
	conns   []*engine.Conn
	closed  atomic.Int64
	stopped atomic.Int64 // closed with ErrEngineStopped
	other   atomic.Pointer[error]
}

func (h *etCountHandler) OnOpen(c *engine.Conn) ([]byte, engine.Action) {
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
	return nil, engine.None
}

func (h *etCountHandler) OnClose(c *engine.Conn, err error) {
	h.closed.Add(1)
	if errors.Is(err, engine.ErrEngineStopped) {
		h.stopped.Add(1)
	} else {
		h.other.CompareAndSwap(nil, &err)
	}
}

func (h *etCountHandler) opened() []*engine.Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns
}

// TestStopManyPending checks Stop with 5,000 connections, each with a
// receive pending and 32 of them with about 1 MiB of output queued for a
// peer that never reads: it returns promptly (well within etWait: the
// time is logged), every connection gets OnClose with ErrEngineStopped,
// the queued output is released, every peer reads end of file, and no
// descriptor or goroutine is left.
func TestStopManyPending(t *testing.T) { backendtest.Run(t, testStopManyPending) }

func testStopManyPending(t *testing.T) {
	const conns, writers = 5000, 32
	leaktest.Check(t)
	h := &etCountHandler{}
	e, err := engine.New(h, engine.Options{WriteHighWater: 8 << 20, MaxWriteBuffer: 8 << 20})
	if err != nil {
		t.Fatalf("engine.New = %v", err)
	}
	t.Cleanup(func() { e.Stop() })
	if err := e.Start(); err != nil {
		t.Fatalf("Start = %v", err)
	}
	// Unix sockets: their buffers (net.core.wmem_default) do not grow, so
	// most of each MiB stays queued in the engine.
	a := etListen(t, e, "unix")
	peers := make([]net.Conn, conns)
	for i := range peers {
		peers[i] = etDial(t, a)
	}
	etWaitFor(t, "every conn open", func() bool { return e.Stats().Total().Conns == conns })
	out := etPattern(1 << 20)
	for i, c := range h.opened()[:writers] {
		if n, err := c.Write(out); n != len(out) || err != nil {
			t.Fatalf("conn %d: Write(1 MiB) = %d, %v", i, n, err)
		}
	}
	queued := e.Stats().Queued
	if queued < writers<<19 {
		t.Fatalf("Stats().Queued = %d after %d MiB to peers that do not read, want most of it", queued, writers)
	}

	start := time.Now()
	etStop(t, e)
	took := time.Since(start)
	t.Logf("Stop with %d conns, %d bytes queued: %v", conns, queued, took.Round(time.Millisecond))
	if n, s := h.closed.Load(), h.stopped.Load(); n != conns || s != conns {
		t.Errorf("after Stop: %d OnClose, %d with ErrEngineStopped, want %d and %d (other: %v)", n, s, conns, conns, h.other.Load())
	}
	if q := e.Stats().Queued; q != 0 {
		t.Errorf("Stats().Queued = %d after Stop, want 0", q)
	}
	for i, p := range peers {
		p.SetReadDeadline(time.Now().Add(etWait))
		if _, err := io.Copy(io.Discard, p); err != nil {
			t.Fatalf("peer %d: read to the end = %v, want end of file", i, err)
		}
		p.Close()
	}
}
