//go:build linux

package poller

// The io_uring backend's spill must go with its connection: a slot's next
// owner must not inherit the buffer a burst grew.

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// spillProvider is a Transient Provider of one 64 KiB buffer (as engine's
// is: its owner's receives are one multishot, which spills while the
// owner is not reading).
type spillProvider struct{ buf []byte }

func (p *spillProvider) Provide() ([]byte, int) { return p.buf, 0 }
func (p *spillProvider) Commit(int, int)        {}
func (p *spillProvider) Transient() bool        { return true }

// TestURingRemoveDropsSpill fills a connection's spill (data a multishot
// receive brings while the owner is not reading), removes the connection,
// and checks that its slot keeps none of it: a server
// whose connections once spilled would otherwise hold that memory in every
// slot for good, whatever connects next.
func TestURingRemoveDropsSpill(t *testing.T) {
	b, tag, fds := urPair(t, &spillProvider{buf: make([]byte, 64<<10)}, ringEntries)
	unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF, 1<<20)

	// One receive from the buffer ring starts the multishot; the owner
	// then stops asking, and what keeps coming is spilled.
	b.Recv(tag, nil)
	chunk := make([]byte, 32<<10)
	got := 0
	deadline := time.Now().Add(10 * time.Second)
	for st := b.state(tag); b.spilled(st) < spillMax; {
		if time.Now().After(deadline) {
			t.Fatalf("spill holds %d bytes after 10 s, want %d", b.spilled(st), spillMax)
		}
		unix.Write(fds[1], chunk) // EAGAIN once the socket is full: retried
		if err := b.Wait(time.Millisecond, func(c *Completion) { got += c.N }); err != nil {
			t.Fatal(err)
		}
	}
	if got == 0 {
		t.Fatalf("the receive did not complete")
	}
	spilled := SpillCap(b, tag)
	if err := b.Remove(tag); err != nil {
		t.Fatal(err)
	}
	if c := SpillCap(b, tag); c != 0 {
		t.Errorf("after Remove, the slot keeps a spill of %d bytes (it had %d), want none", c, spilled)
	}
}
