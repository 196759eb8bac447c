//go:build linux

package poller

// An idle loop gives its provided buffers' pages back, and a trim never
// loses a byte the kernel put in them.

import (
	"bytes"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/galeio/gale/internal/uring"
)

// setTrimAfter sets trimAfter for t.
func setTrimAfter(t *testing.T, d time.Duration) {
	old := trimAfter
	trimAfter = d
	t.Cleanup(func() { trimAfter = old })
}

// urStream writes stream through fds[1] while it receives on tag as
// engine does (one receive asked for at a time, from the buffer ring),
// and returns what arrived once all has, or fails after 10 s.
func urStream(t *testing.T, b *uringBackend, tag Tag, fds [2]int, stream []byte) []byte {
	t.Helper()
	var got []byte
	asked := false
	sent := 0
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < len(stream) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d of %d bytes received", len(got), len(stream))
		}
		if sent < len(stream) {
			n, _ := unix.Write(fds[1], stream[sent:min(sent+3000, len(stream))]) // EAGAIN: retried
			sent += max(n, 0)
		}
		if !asked {
			b.Recv(tag, nil)
			asked = true
		}
		err := b.Wait(time.Millisecond, func(c *Completion) {
			if c.Tag == tag && c.Op == OpRecv {
				asked = false
				if c.Err != 0 && c.Err != NoSpace {
					t.Fatalf("receive: %v", c.Err)
				}
				got = append(got, c.Buf[:c.N]...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// pattern returns n bytes unlike their neighbours', from seed.
func pattern(n, seed int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i>>8 + seed)
	}
	return p
}

// TestURingIdleTrim receives through the buffer ring, goes idle, and
// checks that the loop gave the buffers' pages back within trimAfter and
// a bound; then receives again, intact, into fresh pages.
func TestURingIdleTrim(t *testing.T) {
	setTrimAfter(t, 20*time.Millisecond)
	b, tag, fds := urPair(t, &spillProvider{buf: make([]byte, 64<<10)}, ringEntries)
	if b.r.Flags()&uring.SetupDeferTaskrun == 0 {
		t.Skip("the ring does not defer task work (Linux 6.1): it never trims")
	}
	for round := range 2 {
		stream := pattern(1<<20, round)
		if got := urStream(t, b, tag, fds, stream); !bytes.Equal(got, stream) {
			t.Fatalf("round %d: the bytes received differ from those sent", round)
		}
		if r := b.br.Resident(); r <= 0 {
			t.Fatalf("round %d: %d pages of the buffers resident after 1 MiB received, want some", round, r)
		}
		done := b.trim.done
		deadline := time.Now().Add(5 * time.Second)
		for b.trim.done == done {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no trim 5 s after the last receive (trimAfter %v)", round, trimAfter)
			}
			// Capped at what is left of trimAfter until the trim; the wait
			// that trims then sleeps its whole second.
			if err := b.Wait(time.Second, func(*Completion) {}); err != nil {
				t.Fatal(err)
			}
		}
		if r := b.br.Resident(); r != 0 {
			t.Errorf("round %d: %d pages of the buffers resident after the trim, want 0", round, r)
		}
		if len(b.spares) != 0 || b.spareCap != 0 {
			t.Errorf("round %d: %d spare arrays (%d bytes) kept after the trim, want none", round, len(b.spares), b.spareCap)
		}
	}
}

// TestURingTrimKeepsBytes trims before every wait that may block, while a
// stream arrives, and checks every byte: a trim that zapped a page the
// kernel had filled and not yet reported would show as zeros.
func TestURingTrimKeepsBytes(t *testing.T) {
	setTrimAfter(t, 0)
	b, tag, fds := urPair(t, &spillProvider{buf: make([]byte, 64<<10)}, ringEntries)
	if b.r.Flags()&uring.SetupDeferTaskrun == 0 {
		t.Skip("the ring does not defer task work (Linux 6.1): it never trims")
	}
	stream := pattern(8<<20, 3)
	got := urStream(t, b, tag, fds, stream)
	if i := firstDiff(got, stream); i >= 0 {
		t.Fatalf("byte %d of %d differs: got %#x, sent %#x (%d trims)", i, len(stream), got[i], stream[i], b.trim.done)
	}
	if b.trim.done == 0 {
		t.Fatalf("no trim during the stream: the test checked nothing")
	}
	t.Logf("%d trims during %d bytes", b.trim.done, len(stream))
}

// firstDiff returns the first index at which a and b differ, or -1.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
