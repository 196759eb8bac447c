package websocket

import "unsafe"

// connSet is a set of connections: an open-addressed hash table of
// pointers with linear probing, for liveSet, which holds every
// connection an Upgrader serves. A map[*Conn]struct{} holds some 33
// bytes a connection (measured at 16,668 and 18,000: its groups' control
// words, and tables kept at most 7/8 full, half full after a split);
// this one 8 bytes a slot, kept between 3/16 and 3/4 full: 11 bytes a
// connection when fullest, 21 once doubled, 43 at most (while it
// empties). Its zero value is empty; it is not safe for concurrent use.
type connSet struct {
	slots []*Conn // len is a power of two, or 0; nil marks a free slot
	n     int     // the connections held
}

// minSlots is the smallest table; a set that empties below it keeps it.
const minSlots = 64

// home is c's first slot in a table of mask+1 slots: the top bits of its
// address times 2^64/φ (Knuth's multiplicative hashing, TAOCP §6.4),
// which spreads the addresses of a size class's objects, multiples of
// its size, over the table.
func home(c *Conn, mask uintptr) uintptr {
	return uintptr(uint64(uintptr(unsafe.Pointer(c)))*0x9e3779b97f4a7c15>>32) & mask
}

// add puts c in s; it must not be there.
func (s *connSet) add(c *Conn) {
	if (s.n+1)*4 > len(s.slots)*3 {
		s.resize(max(minSlots, 2*len(s.slots)))
	}
	s.put(c)
	s.n++
}

// put puts c in the first free slot from its home; there is one.
func (s *connSet) put(c *Conn) {
	mask := uintptr(len(s.slots) - 1)
	i := home(c, mask)
	for s.slots[i] != nil {
		i = (i + 1) & mask
	}
	s.slots[i] = c
}

// remove takes c out of s, if it is there, and reports whether it was.
func (s *connSet) remove(c *Conn) bool {
	if s.n == 0 {
		return false
	}
	mask := uintptr(len(s.slots) - 1)
	i := home(c, mask)
	for s.slots[i] != c {
		if s.slots[i] == nil {
			return false
		}
		i = (i + 1) & mask
	}
	// Backward-shift deletion: the connections after c in its run move
	// back into the hole when their home allows, so that no search
	// stops early at it and no tombstone is needed.
	for j := (i + 1) & mask; s.slots[j] != nil; j = (j + 1) & mask {
		if h := home(s.slots[j], mask); (j-h)&mask >= (j-i)&mask {
			s.slots[i] = s.slots[j]
			i = j
		}
	}
	s.slots[i] = nil
	s.n--
	if len(s.slots) > minSlots && s.n*16 < len(s.slots)*3 {
		s.resize(len(s.slots) / 2)
	}
	return true
}

// resize moves s's connections to a table of n slots.
func (s *connSet) resize(n int) {
	old := s.slots
	s.slots = make([]*Conn, n)
	for _, c := range old {
		if c != nil {
			s.put(c)
		}
	}
}

// len returns the number of connections in s.
func (s *connSet) len() int { return s.n }

// appendTo appends s's connections to conns, in no particular order.
func (s *connSet) appendTo(conns []*Conn) []*Conn {
	for _, c := range s.slots {
		if c != nil {
			conns = append(conns, c)
		}
	}
	return conns
}
