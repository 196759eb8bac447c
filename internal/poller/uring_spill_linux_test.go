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
	// then stops asking, and what keeps coming is spilled until the
	// multishot ends (its byte limit) or is stopped (spillMax).
	b.Recv(tag, nil)
	chunk := make([]byte, 32<<10)
	got := 0
	deadline := time.Now().Add(10 * time.Second)
	for st := b.state(tag); got == 0 || b.spilled(st) == 0 || st.rk != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d bytes received, %d spilled, kernel operation %d, want a spill and none", got, b.spilled(st), st.rk)
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

// TestURingSpillSteadyAllocs pauses and resumes a reader again and again,
// as engine's backpressure does under a stream that outruns its peer:
// at each pause the multishot receive goes on and spills what it brings
// (up to its byte limit and a buffer; without the limit, a burst of up to
// the buffer ring's size in one batch), at each resume the spill is
// served. Once the first cycles have sized the spill's
// array, a cycle must allocate nothing: the spill used to be allocated
// afresh at each pause (hundreds of MB a second on a 1 GB/s stream).
// Every byte is checked, in order.
func TestURingSpillSteadyAllocs(t *testing.T) {
	b, tag, fds := urPair(t, &spillProvider{buf: make([]byte, 64<<10)}, ringEntries)
	if err := unix.SetsockoptInt(fds[1], unix.SOL_SOCKET, unix.SO_SNDBUF, 4<<20); err != nil {
		t.Fatal(err)
	}
	const burst, cycles = 512 << 10, 3 + 11 // warm-up, then AllocsPerRun's runs
	stream := make([]byte, cycles*burst)    // bytes unlike their neighbours': reordering shows
	for i := range stream {
		stream[i] = byte(i*7 + i>>8 + i>>16)
	}
	var sent, got int
	reading := false
	var bad string
	fn := func(c *Completion) {
		if c.Op != OpRecv || c.Err != 0 {
			bad = "unexpected completion"
			return
		}
		if string(c.Buf) != string(stream[got:got+c.N]) && bad == "" {
			bad = "bytes out of order"
		}
		got += c.N
		if reading && got < sent {
			b.Recv(tag, nil)
		} else {
			reading = false
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	cycle := func() {
		// Paused: nothing asks, and the burst is spilled or stays in the
		// socket once the multishot is stopped.
		for end := sent + burst; sent < end && time.Now().Before(deadline); {
			if n, _ := unix.Write(fds[1], stream[sent:min(end, sent+64<<10)]); n > 0 {
				sent += n
			}
			b.Wait(0, fn)
		}
		b.Wait(time.Millisecond, fn)
		// Resumed: read until all the burst came.
		reading = true
		b.Recv(tag, nil)
		for got < sent && time.Now().Before(deadline) && bad == "" {
			b.Wait(time.Millisecond, fn)
		}
		reading = false
	}
	b.Recv(tag, nil) // starts the multishot
	for range 3 {
		cycle()
	}
	allocs := testing.AllocsPerRun(10, cycle)
	switch {
	case bad != "":
		t.Fatalf("%s at byte %d", bad, got)
	case got != sent:
		t.Fatalf("received %d of %d bytes in 20 s", got, sent)
	case allocs > 0:
		t.Errorf("a pause and resume allocated %.1f times, want 0", allocs)
	}
}
