//go:build !race

package poller_test

import (
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestWinRoundAllocs: on the IOCP port, a receive into the Provider's
// space and a send, each submitted and delivered, allocate nothing.
func TestWinRoundAllocs(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
		fd, peer := pair(t, "own")
		be := open(t, newSpace())
		add(t, be, fd, tagA, true)
		msg, back := []byte("ping"), make([]byte, 4)
		bufs := [][]byte{msg}
		got := 0
		count := func(c *poller.Completion) {
			if c.Err != 0 {
				t.Fatalf("completion %+v", c)
			}
			got++
		}
		peer.SetDeadline(time.Now().Add(time.Minute))
		round := func() {
			peer.Write(msg)
			be.Recv(tagA, nil)
			be.Send(tagA, bufs)
			for got = 0; got < 2; {
				if err := be.Wait(waitLimit, count); err != nil {
					t.Fatal(err)
				}
			}
			ioReadFull(peer, back)
		}
		for range 50 {
			round()
		}
		if n := testing.AllocsPerRun(500, round); n != 0 {
			t.Errorf("AllocsPerRun(receive and send round) = %v, want 0", n)
		}
	})
}
