//go:build linux

package poller_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"math/rand/v2"
	"testing"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

func TestTagPacking(t *testing.T) { backendtest.Run(t, testTagPacking) }

func testTagPacking(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		slot, gen := rng.Uint32(), rng.Uint32()
		tag := poller.MakeTag(slot, gen)
		if tag.Slot() != slot || tag.Gen() != gen {
			t.Fatalf("MakeTag(%d, %d) unpacks to %d, %d", slot, gen, tag.Slot(), tag.Gen())
		}
	}
}

// TestRemoveDropsInFlight: operations in flight when their tag is removed
// never complete, and once the descriptor is added again under a new
// generation of the same slot, completions carry the new tag only.
func TestRemoveDropsInFlight(t *testing.T) { backendtest.Run(t, testRemoveDropsInFlight) }

func testRemoveDropsInFlight(t *testing.T) {
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		shrinkBuffers(t, fd, peer)
		be := open(t, nil)
		tagB := poller.MakeTag(tagA.Slot(), tagA.Gen()+1)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tagA, make([]byte, 64))
		data := pattern(8 << 20)
		be.Send(tagA, [][]byte{data})
		if rs := poll0(t, be); len(rs) != 0 {
			t.Fatalf("Wait(0) delivered %v, want nothing", rs)
		}
		if err := be.Remove(tagA); err != nil {
			t.Fatalf("Remove: %v", err)
		}
		if err := be.Remove(tagA); err != nil {
			t.Fatalf("second Remove = %v, want nil", err)
		}
		be.Cancel(tagA, poller.OpRecv) // stale: no-op
		if err := be.Add(fd, tagB, true); err != nil {
			t.Fatalf("Add under a new generation: %v", err)
		}
		be.Recv(tagB, make([]byte, 64))
		writeAll(t, peer, []byte("for B"))
		rs := waitN(t, be, 1)
		rs = append(rs, poll0(t, be)...)
		if len(rs) != 1 {
			t.Fatalf("completions %v, want only B's receive", rs)
		}
		wantRecv(t, rs[0], tagB, "for B")
	})
}

// TestStaleEventSameBatch makes two descriptors ready in one batch of
// events; the callback for the first removes the second's tag and adds
// its descriptor again under a new generation. The removed tag's event
// (or completion), still in the batch, must be dropped.
func TestStaleEventSameBatch(t *testing.T) { backendtest.Run(t, testStaleEventSameBatch) }

func testStaleEventSameBatch(t *testing.T) {
	checkFDs(t)
	be := open(t, nil)
	var fds, peers [2]int
	var tags [2]poller.Tag
	for i := range 2 {
		p, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			unix.Close(p[0])
			unix.Close(p[1])
		})
		fds[i], peers[i] = p[0], p[1]
		tags[i] = poller.MakeTag(uint32(i), 1)
		if err := be.Add(fds[i], tags[i], true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tags[i], make([]byte, 16))
	}
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	for i := range 2 {
		if _, err := unix.Write(peers[i], []byte{'0' + byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []result
	var removed, renewed poller.Tag
	rec := record(&got)
	fn := func(c *poller.Completion) {
		rec(c)
		if removed != 0 {
			return
		}
		// Whichever completes first removes the other.
		other := 1 - int(c.Tag.Slot())
		removed = tags[other]
		renewed = poller.MakeTag(removed.Slot(), removed.Gen()+1)
		if err := be.Remove(removed); err != nil {
			t.Errorf("Remove: %v", err)
		}
		if err := be.Add(fds[other], renewed, true); err != nil {
			t.Errorf("Add: %v", err)
		}
		be.Recv(renewed, make([]byte, 16))
	}
	// On a completion backend the removed tag's receive may already have
	// taken its byte in the kernel: Remove ends it with no completion, and
	// the byte goes with it. Send the renewed tag another.
	completion := be.Kind() == poller.IOURing || be.Kind() == poller.Net
	for i := 0; len(got) < 2 && i < 100; i++ {
		if completion && len(got) == 1 && i == 10 {
			unix.Write(peers[renewed.Slot()], []byte{'0' + byte(renewed.Slot())})
		}
		if err := be.Wait(waitLimit/100, fn); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 {
		t.Fatalf("completions %v, want two", got)
	}
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("extra completions %v", rs)
	}
	for _, r := range got[1:] {
		if r.Tag == removed {
			t.Fatalf("completion %v carries the removed tag", r)
		}
		if r.Tag != renewed || r.N != 1 || r.Buf[0] != '0'+byte(renewed.Slot()) {
			t.Fatalf("completion %v, want the renewed tag %#x with its byte", r, uint64(renewed))
		}
	}
}

// TestAddRemoveErrors: Add of a bad descriptor fails, Remove of an unknown
// tag is a no-op.
func TestAddRemoveErrors(t *testing.T) { backendtest.Run(t, testAddRemoveErrors) }

func testAddRemoveErrors(t *testing.T) {
	checkFDs(t)
	be := open(t, nil)
	if err := be.Add(-1, tagA, true); err == nil {
		t.Fatal("Add(-1) succeeded, want an error")
	}
	if err := be.Remove(tagA); err != nil {
		t.Fatalf("Remove after a failed Add = %v, want nil", err)
	}
	if err := be.Remove(poller.MakeTag(1000, 1)); err != nil {
		t.Fatalf("Remove(unknown) = %v, want nil", err)
	}
}

// TestMisusePanics: a second receive or send in flight on one tag, or an
// operation on an unknown tag, is a broken invariant and panics.
func TestMisusePanics(t *testing.T) { backendtest.Run(t, testMisusePanics) }

func testMisusePanics(t *testing.T) {
	checkFDs(t)
	fd, _ := streamPair(t, "unix")
	be := open(t, nil)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Recv(tagA, make([]byte, 8))
	for name, f := range map[string]func(){
		"second Recv":     func() { be.Recv(tagA, make([]byte, 8)) },
		"Recv on unknown": func() { be.Recv(poller.MakeTag(3, 1), make([]byte, 8)) },
		"Send on unknown": func() { be.Send(poller.MakeTag(0, 9), [][]byte{{1}}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}
