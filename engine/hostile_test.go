package engine_test

// Hostile clients of a broadcast server: one client never reads what a
// broadcaster, writing from its own goroutine and heedless of
// backpressure, sends to everyone (stresstest.Hostile). MaxWriteBuffer
// must cut that client off, and memory must stay under the cap
// meanwhile.

import (
	"errors"
	"sync"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/stresstest"
)

// etCaster is the broadcast server's list of connections.
type etCaster struct {
	mu    sync.Mutex
	conns map[*engine.Conn]bool
}

func (b *etCaster) add(c *engine.Conn) {
	b.mu.Lock()
	b.conns[c] = true
	b.mu.Unlock()
}

func (b *etCaster) remove(c *engine.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	b.mu.Unlock()
}

func (b *etCaster) list() []*engine.Conn {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]*engine.Conn, 0, len(b.conns))
	for c := range b.conns {
		out = append(out, c)
	}
	return out
}

// TestHostileBroadcastNonReader broadcasts stresstest.Hostile's messages
// to its reading clients and the one that never reads, writing from a
// goroutine of its own and ignoring backpressure (it only keeps within
// stresstest.HostileWindow of the slowest reader), with MaxWriteBuffer
// stresstest.HostileCap. Hostile checks that the readers get every
// message in order and that the heap stays under the cap (plus the
// readers' windows and a slack). The test checks that the non-reader's
// queue never passes MaxWriteBuffer, that the Write that would pass it
// fails with ErrWriteBufferFull and closes it with that error, and that
// the engine's queued total stays under the cap and the readers'
// windows.
func TestHostileBroadcastNonReader(t *testing.T) { backendtest.Run(t, testHostileBroadcastNonReader) }

func testHostileBroadcastNonReader(t *testing.T) {
	const limit = stresstest.HostileCap
	h := etNewHandler()
	e := etStart(t, h, engine.Options{MaxWriteBuffer: limit, WriteHighWater: limit / 4})
	cast := &etCaster{conns: map[*engine.Conn]bool{}}
	var mute *engine.Conn
	var res etCastResult
	msg := make([]byte, stresstest.HostileMsg)
	run := stresstest.Hostile(t, stresstest.HostileTarget{
		Addr:    etListen(t, e, "tcp"),
		Timeout: etWait,
		Opened: func(i int) {
			c := etOpened(t, h)
			cast.add(c)
			if i == stresstest.HostileReaders {
				mute = c
			}
		},
		Send: func(seq int) error {
			stresstest.Stamp(msg, seq)
			etBroadcast(cast, msg, mute, &res)
			return nil
		},
		Gauges: []func() int64{func() int64 { return e.Stats().Queued }},
	})
	queuedPeak := run.Peaks[0]

	t.Logf("the non-reader was cut after %d bytes accepted, its queue at most %d bytes (cap %d); Stats().Queued peak %d",
		res.muteSent, res.muteMax, limit, queuedPeak)
	if !errors.Is(res.muteErr, engine.ErrWriteBufferFull) {
		t.Errorf("Write to the non-reader = %v, want ErrWriteBufferFull", res.muteErr)
	}
	if ev := etClosed(t, h); ev.c != mute || !errors.Is(ev.err, engine.ErrWriteBufferFull) {
		t.Errorf("OnClose(%p, %v), want the non-reader %p with ErrWriteBufferFull", ev.c, ev.err, mute)
	}
	if res.muteMax > limit+stresstest.HostileMsg {
		t.Errorf("the non-reader's OutboundBuffered reached %d, want at most MaxWriteBuffer %d and one message", res.muteMax, limit)
	}
	if bound := int64(limit + stresstest.HostileReaders*(stresstest.HostileWindow+stresstest.HostileMsg)); queuedPeak > bound {
		t.Errorf("Stats().Queued peaked at %d, want at most %d (the cap and the readers' windows)", queuedPeak, bound)
	}
}

// etCastResult is what the broadcaster saw of the non-reader.
type etCastResult struct {
	muteSent int   // bytes Write accepted for it
	muteMax  int   // the most it had queued after a Write
	muteErr  error // the Write that failed
}

// etBroadcast writes msg to every connection of cast; a connection whose
// Write fails leaves the broadcast. It records in res what it saw of
// mute.
func etBroadcast(cast *etCaster, msg []byte, mute *engine.Conn, res *etCastResult) {
	for _, c := range cast.list() {
		_, err := c.Write(msg)
		if err != nil {
			cast.remove(c)
		}
		if c != mute {
			continue
		}
		if err != nil {
			res.muteErr = err
			continue
		}
		res.muteSent += len(msg)
		res.muteMax = max(res.muteMax, c.OutboundBuffered())
	}
}
