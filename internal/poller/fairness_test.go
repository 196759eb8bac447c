//go:build linux

package poller_test

import (
	"testing"

	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/poller"
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
	const total, limit = 32 << 20, 64 // 512 receives of 64 KiB; a Wait may serve a few
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
	got, served := 0, 0
	for got < total && served <= limit {
		served = 0
		if err := be.Wait(waitLimit, func(c *poller.Completion) {
			if c.Tag == tagA && c.Op == poller.OpRecv && c.N > 0 {
				got += c.N
				served++
				be.Recv(tagA, nil)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if served > limit {
		t.Errorf("one Wait served %d receives of the same socket while its peer kept writing, want at most %d: the loop's other work waits meanwhile", served, limit)
	}
	peer.Close()
	<-done
}
