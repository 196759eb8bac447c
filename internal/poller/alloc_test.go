//go:build linux && !race

package poller_test

import (
	"testing"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// oneBuffer is a copying Provider of one buffer, reused by every
// receive.
type oneBuffer struct{ buf []byte }

func (p *oneBuffer) Provide() ([]byte, int) { return p.buf, 0 }
func (p *oneBuffer) Commit(int, int)        {}

// TestSteadyStateAllocs: a round of a nil-buffer receive with data
// waiting and a send, each delivered by Wait (through the deferred
// receives and the queue of ready completions), allocates nothing once
// warm.
func TestSteadyStateAllocs(t *testing.T) { backendtest.Run(t, testSteadyStateAllocs) }

func testSteadyStateAllocs(t *testing.T) {
	skipOnNet(t, "a worker goroutine and its record per operation")
	checkFDs(t)
	pair := socketpair(t)
	be := open(t, &oneBuffer{buf: make([]byte, 64)})
	if err := be.Add(pair[0], tagA, true); err != nil {
		t.Fatal(err)
	}
	msg, peerBuf := []byte("ping"), make([]byte, 64)
	bufs := [][]byte{msg}
	n := 0
	fn := func(*poller.Completion) { n++ }
	round := func() {
		unix.Write(pair[1], msg)
		be.Recv(tagA, nil)
		be.Send(tagA, bufs)
		for n = 0; n < 2; {
			if err := be.Wait(waitLimit, fn); err != nil {
				t.Fatal(err)
			}
		}
		unix.Read(pair[1], peerBuf)
	}
	round()
	if a := testing.AllocsPerRun(100, round); a != 0 {
		t.Errorf("a receive and send round allocates %v times, want 0", a)
	}
}
