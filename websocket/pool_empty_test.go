package websocket_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// TestPoolQueueBoundEmpty: empty messages and empty pings, which carry no
// payload, still count against the per-connection bound: while the
// callback blocks, a peer that floods them is stopped (its bytes stop
// being read), where it could otherwise queue calls without end.
func TestPoolQueueBoundEmpty(t *testing.T) { backendtest.Run(t, testPoolQueueBoundEmpty) }

func testPoolQueueBoundEmpty(t *testing.T) {
	s := newWPServer()
	s.quiet = true
	release := make(chan struct{})
	blocked := make(chan struct{}, 1)
	s.block = func(c *websocket.Conn, msg string) {
		if msg == "block" {
			blocked <- struct{}{}
			<-release
		}
	}
	ps := &pingServer{wpServer: s}
	const maxQueued = 16 << 10
	p := engine.NewPool(engine.PoolOptions{MaxWorkers: 2, MaxQueued: maxQueued})
	t.Cleanup(p.Close)
	u := &websocket.Upgrader{Options: websocket.Options{Handler: ps, Pool: p}}
	url := serveWSLoops(t, u, false, 1)
	rc, _ := rawDial(t, url)
	t.Cleanup(func() { rc.nc.Close() })
	rc.nc.Write(rawFrame(0x82, true, []byte("block")))
	wpRecv(t, blocked, "the blocking callback")
	defer close(release)
	// 6 bytes a frame (masked, empty): 24 MB of them, far more than the
	// socket buffers hold.
	var flood bytes.Buffer
	for i := range 1 << 16 {
		op := byte(0x82)
		if i%2 == 1 {
			op = 0x89 // an empty ping
		}
		flood.Write(rawFrame(op, true, nil))
	}
	chunk := flood.Bytes()
	var written atomic.Int64
	go func() {
		rc.nc.SetWriteDeadline(time.Now().Add(2 * testTimeout))
		for range 64 {
			n, err := rc.nc.Write(chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	// The client's writes stall: the server stopped reading. Without a
	// bound it read all 24 MB, queueing four million calls.
	var w int64
	stalled := func() bool {
		w = written.Load()
		time.Sleep(200 * time.Millisecond)
		return written.Load() == w
	}
	deadline := time.Now().Add(testTimeout)
	for !stalled() {
		if time.Now().After(deadline) {
			t.Fatalf("the server went on reading empty frames: %d bytes written to it", w)
		}
	}
	if limit := int64(len(chunk) * 64); w >= limit {
		t.Fatalf("the client wrote all %d bytes of empty frames while the callback blocked", w)
	}
}

// pingServer is a wpServer that sees pings (so that they are queued for
// the pool, as a PingHandler's are).
type pingServer struct{ *wpServer }

func (s *pingServer) OnPing(c *websocket.Conn, data []byte) {}
