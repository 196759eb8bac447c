package loop

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/galeio/gale/internal/poller"
)

type nopOwner struct{ id int }

func (*nopOwner) Complete(*Loop, Completion) {}

func TestSlotReuseNewGeneration(t *testing.T) {
	var st slotTable
	o1, o2 := &nopOwner{1}, &nopOwner{2}
	a := st.alloc(o1)
	if a == 0 || a.Gen() == 0 {
		t.Fatalf("alloc() = %#x (gen %d), want a non-zero tag and generation", uint64(a), a.Gen())
	}
	if got := st.lookup(a); got != o1 {
		t.Fatalf("lookup(a) = %v, want %v", got, o1)
	}
	st.release(a)
	if got := st.lookup(a); got != nil {
		t.Fatalf("lookup(a) after release = %v, want nil", got)
	}
	b := st.alloc(o2)
	if b.Slot() != a.Slot() {
		t.Fatalf("alloc after release: slot %d, want reuse of slot %d", b.Slot(), a.Slot())
	}
	if b == a || b.Gen() == a.Gen() {
		t.Fatalf("reused slot tag = %#x (gen %d), want a generation other than %d", uint64(b), b.Gen(), a.Gen())
	}
	if got := st.lookup(a); got != nil {
		t.Fatalf("lookup(stale a) = %v, want nil", got)
	}
	if got := st.lookup(b); got != o2 {
		t.Fatalf("lookup(b) = %v, want %v", got, o2)
	}
	// Releasing the stale tag must not free the new owner's slot.
	st.release(a)
	if got := st.lookup(b); got != o2 || st.used != 1 {
		t.Fatalf("after release(stale a): lookup(b) = %v, used = %d; want %v, 1", got, st.used, o2)
	}
	// A tag for a slot that never existed.
	if got := st.lookup(poller.MakeTag(99, 1)); got != nil {
		t.Fatalf("lookup(unknown slot) = %v, want nil", got)
	}
	st.release(poller.MakeTag(99, 1))
	if st.used != 1 {
		t.Fatalf("used after release(unknown) = %d, want 1", st.used)
	}
}

func TestSlotGenerationWraps(t *testing.T) {
	var st slotTable
	o := &nopOwner{}
	a := st.alloc(o)
	st.at(a.Slot()).gen = math.MaxUint32
	a = poller.MakeTag(a.Slot(), math.MaxUint32)
	if st.lookup(a) != o {
		t.Fatal("lookup after forcing the generation to MaxUint32 failed")
	}
	st.release(a)
	b := st.alloc(o)
	if b.Gen() == 0 {
		t.Fatalf("generation after wrap-around = 0, want non-zero")
	}
	if b.Gen() != 1 {
		t.Fatalf("generation after wrap-around = %d, want 1", b.Gen())
	}
}

// TestSlotRandom allocates and releases at random and checks every live
// tag resolves to its owner, every released tag to nil, and no tag or
// generation is ever 0.
func TestSlotRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var st slotTable
	live := map[poller.Tag]Owner{}
	var order []poller.Tag // live tags, for a reproducible random choice
	var dead []poller.Tag
	for step := range 20000 {
		if len(live) == 0 || rng.IntN(5) < 3 {
			o := &nopOwner{step}
			tag := st.alloc(o)
			if tag == 0 || tag.Gen() == 0 {
				t.Fatalf("step %d: alloc() = %#x, want non-zero tag and generation", step, uint64(tag))
			}
			if _, dup := live[tag]; dup {
				t.Fatalf("step %d: alloc() returned live tag %#x", step, uint64(tag))
			}
			live[tag] = o
			order = append(order, tag)
		} else {
			k := rng.IntN(len(order))
			tag := order[k]
			order[k] = order[len(order)-1]
			order = order[:len(order)-1]
			st.release(tag)
			delete(live, tag)
			dead = append(dead, tag)
		}
		if st.used != len(live) {
			t.Fatalf("step %d: used = %d, want %d", step, st.used, len(live))
		}
		if step%251 == 0 {
			for tag, o := range live {
				if got := st.lookup(tag); got != o {
					t.Fatalf("step %d: lookup(%#x) = %v, want %v", step, uint64(tag), got, o)
				}
			}
			for _, tag := range dead {
				if got := st.lookup(tag); got != nil {
					t.Fatalf("step %d: lookup(released %#x) = %v, want nil", step, uint64(tag), got)
				}
			}
		}
	}
}
