//go:build linux

package poller_test

import (
	"testing"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestWaitYieldsToStream: an owner that resubmits its nil-buffer receive
// from the completion's callback (engine, netconn), on a socket whose
// peer writes without pause, must not keep one Wait for itself: the
// loop's tasks, timers and other descriptors wait until Wait returns.
// emul's drain used to serve a receive submitted during delivery in the
// same Wait, again and again while data kept coming, so one Wait lasted
// until the peer paused: netconn's TestEngineRoundTrip saw
// engine.Conn.DetachInput's task wait 75-600 ms for the loop on TCP
// loopback. drain now stops after maxRounds rounds.
func TestWaitYieldsToStream(t *testing.T) { backendtest.Run(t, testWaitYieldsToStream) }

func testWaitYieldsToStream(t *testing.T) {
	// A Wait's share is bounded in bytes, not receives: emul's drain makes
	// at most maxRounds rounds, and io_uring's delivers what one kernel
	// batch brought, at most its buffer ring's 2 MiB (64 incremental
	// buffers of 32 KiB, in pieces of any size: 66 receives were seen)
	// plus what its drains serve. Measured: at most 2 MiB + 64 KiB. The
	// bug this guards against served all 32 MiB in one Wait.
	const total = 32 << 20
	const limit = total / 8
	fd, peer := streamPair(t, "tcp")
	be := open(t, spaceProvider{})
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		peer.Write(make([]byte, total))
	}()
	be.Recv(tagA, nil)
	got, bytes, served := 0, 0, 0
	for got < total && bytes <= limit {
		bytes, served = 0, 0
		if err := be.Wait(waitLimit, func(c *poller.Completion) {
			if c.Tag == tagA && c.Op == poller.OpRecv && c.N > 0 {
				got += c.N
				bytes += c.N
				served++
				be.Recv(tagA, nil)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if bytes > limit {
		t.Errorf("one Wait served %d bytes (%d receives) of the same socket while its peer kept writing, want at most %d: the loop's other work waits meanwhile", bytes, served, limit)
	}
	peer.Close()
	<-done
}
