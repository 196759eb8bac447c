package loop

import "github.com/galeio/gale/internal/poller"

// slot is one entry of the loop's table. gen changes every time the slot is
// released, so a completion or event carrying an older tag is recognised as
// stale. Generations start at 1: no valid tag is ever 0.
type slot struct {
	gen   uint32
	owner Owner // nil when free
}

// slotTable holds the slots in fixed pages, so a table of many
// connections grows without copying and wastes at most one page (a
// doubling slice wasted a quarter of it on average).
type slotTable struct {
	pages [][]slot
	n     uint32   // slots made
	free  []uint32 // released slots, reused first
	used  int
}

// slotPage is the number of slots in a page.
const slotPage = 256

// at returns slot i, which exists.
func (t *slotTable) at(i uint32) *slot { return &t.pages[i/slotPage][i%slotPage] }

func (t *slotTable) alloc(o Owner) poller.Tag {
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		if t.n%slotPage == 0 {
			t.pages = append(t.pages, make([]slot, slotPage))
		}
		i = t.n
		t.n++
		t.at(i).gen = 1
	}
	s := t.at(i)
	s.owner = o
	t.used++
	return poller.MakeTag(i, s.gen)
}

func (t *slotTable) lookup(tag poller.Tag) Owner {
	i := tag.Slot()
	if i >= t.n {
		return nil
	}
	if s := t.at(i); s.gen == tag.Gen() {
		return s.owner
	}
	return nil
}

func (t *slotTable) release(tag poller.Tag) {
	i := tag.Slot()
	if t.lookup(tag) == nil {
		return
	}
	s := t.at(i)
	s.owner = nil
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	t.free = append(t.free, i)
	t.used--
}

// each calls f with the owner of every slot in use, from the last slot to
// the first. f may release slots, its own or others'.
func (t *slotTable) each(f func(Owner)) {
	for i := t.n; i > 0; i-- {
		if o := t.at(i - 1).owner; o != nil {
			f(o)
		}
	}
}
