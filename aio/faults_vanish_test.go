//go:build unix

package aio_test

// A peer that vanishes without FIN or RST: its socket stays open, it
// neither sends nor reads, so only deadlines end the requests on its
// connection. The deadlines run on a manual clock.

import (
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// TestVanishedPeer checks a read with a deadline and a 32 MiB write with
// a later one, pending together on such a peer's connection: each
// completes with ErrDeadline at its deadline and not before (the write
// with the part it wrote), another connection on the same loop is served
// before, between and after, and Free then releases the descriptor.
func TestVanishedPeer(t *testing.T) { backendtest.Run(t, testVanishedPeer) }

func testVanishedPeer(t *testing.T) {
	leaktest.Check(t) // first: its check runs after every other cleanup
	w, clock := stClockWatcher(t, aio.Config{Loops: 1})
	col := stCollect(t, w)
	c, _ := stTCPPair(t) // the peer vanishes: it never reads, sends or closes
	other, otherPeer := stTCPPair(t)
	served := func(when string) {
		t.Helper()
		stWrite(t, otherPeer, []byte(when))
		if err := w.Read("other", other, make([]byte, 64)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		if r := col.next(t); r.Context != "other" || r.Error != nil || string(r.Data) != when {
			t.Fatalf("%s: read on the other conn = %v %q %v, want %q", when, r.Context, r.Data, r.Error, when)
		}
	}

	big := stPattern(4, 32<<20)
	if err := w.ReadTimeout("read", c, make([]byte, 64), clock.Now().Add(time.Second)); err != nil {
		t.Fatalf("ReadTimeout = %v", err)
	}
	if err := w.WriteTimeout("write", c, big, clock.Now().Add(2*time.Second)); err != nil {
		t.Fatalf("WriteTimeout = %v", err)
	}
	w.Poke() // the write is in flight: the peer's buffers are full
	if s := w.Stats().Total(); s.PendingReads != 1 || s.PendingWrites != 1 {
		t.Fatalf("Stats = %d reads, %d writes pending, want 1, 1", s.PendingReads, s.PendingWrites)
	}
	served("before the deadlines")

	clock.Advance(time.Second - time.Millisecond)
	w.Poke()
	col.none(t)
	clock.Advance(time.Millisecond)
	w.Poke()
	r := col.next(t)
	if r.Context != "read" {
		t.Fatalf("completion %v at the read's deadline, want the read", r.Context)
	}
	stCheckDeadline(t, r, 0)
	served("between the deadlines")

	clock.Advance(time.Second)
	w.Poke()
	r = col.next(t)
	if r.Context != "write" {
		t.Fatalf("completion %v at the write's deadline, want the write", r.Context)
	}
	stCheckDeadline(t, r, r.Size)
	if r.Size <= 0 || r.Size >= len(big) {
		t.Errorf("write cut by its deadline: Size %d, want in (0, %d)", r.Size, len(big))
	}
	if err := w.Free(c); err != nil {
		t.Fatalf("Free = %v", err)
	}
	stWaitFor(t, w, "the vanished peer's conn to be released", func() bool { return w.Stats().Total().Conns == 1 })
	served("after Free")
	if s := w.Stats().Total(); s.PendingReads != 0 || s.PendingWrites != 0 || w.Timers() != 0 {
		t.Errorf("Stats = %d reads, %d writes pending, %d timers, want none", s.PendingReads, s.PendingWrites, w.Timers())
	}
}
