package loop

import "github.com/galeio/gale/internal/poller"

// slot is one entry of the loop's table. gen changes every time the slot is
// released, so a completion or event carrying an older tag is recognised as
// stale. Generations start at 1: no valid tag is ever 0.
type slot struct {
	gen   uint32
	owner Owner // nil when free
}

type slotTable struct {
	slots []slot
	free  []uint32
	used  int
}

func (t *slotTable) alloc(o Owner) poller.Tag {
	var i uint32
	if n := len(t.free); n > 0 {
		i = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		t.slots = append(t.slots, slot{gen: 1})
		i = uint32(len(t.slots) - 1)
	}
	s := &t.slots[i]
	s.owner = o
	t.used++
	return poller.MakeTag(i, s.gen)
}

func (t *slotTable) lookup(tag poller.Tag) Owner {
	i := tag.Slot()
	if int(i) >= len(t.slots) || t.slots[i].gen != tag.Gen() {
		return nil
	}
	return t.slots[i].owner
}

func (t *slotTable) release(tag poller.Tag) {
	i := tag.Slot()
	if t.lookup(tag) == nil {
		return
	}
	s := &t.slots[i]
	s.owner = nil
	s.gen++
	if s.gen == 0 {
		s.gen = 1
	}
	t.free = append(t.free, i)
	t.used--
}
