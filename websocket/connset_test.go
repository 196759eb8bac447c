package websocket

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestConnSet checks the set against a map through random adds and
// removes, growing, emptying and growing again: every connection added
// and not removed is found, and no other.
func TestConnSet(t *testing.T) {
	var s connSet
	want := map[*Conn]bool{}
	pool := make([]*Conn, 5000)
	for i := range pool {
		pool[i] = new(Conn)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(step string) {
		t.Helper()
		if s.len() != len(want) {
			t.Fatalf("%s: len = %d, want %d", step, s.len(), len(want))
		}
		got := s.appendTo(nil)
		if len(got) != len(want) {
			t.Fatalf("%s: appendTo gave %d connections, want %d", step, len(got), len(want))
		}
		for _, c := range got {
			if !want[c] {
				t.Fatalf("%s: appendTo gave a connection not in the set", step)
			}
		}
		if len(s.slots) > minSlots && s.n*16 < len(s.slots)*3 || s.n*4 > len(s.slots)*3 {
			t.Fatalf("%s: %d connections in %d slots", step, s.n, len(s.slots))
		}
	}
	// Fill, then a random mix, then empty, twice.
	for round := range 2 {
		for _, c := range pool[:4000] {
			if !want[c] {
				s.add(c)
				want[c] = true
			}
		}
		check("filled")
		for range 20000 {
			c := pool[rng.IntN(len(pool))]
			if want[c] && rng.IntN(2) == 0 {
				if !s.remove(c) {
					t.Fatalf("round %d: remove of a member = false", round)
				}
				delete(want, c)
			} else if !want[c] {
				s.add(c)
				want[c] = true
			} else if s.remove(new(Conn)) {
				t.Fatalf("round %d: remove of a stranger = true", round)
			}
		}
		check("mixed")
		order := slices.Clone(pool)
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, c := range order {
			if s.remove(c) != want[c] {
				t.Fatalf("round %d: remove = %v, want %v", round, !want[c], want[c])
			}
			delete(want, c)
		}
		check("emptied")
		if len(s.slots) != minSlots {
			t.Errorf("round %d: an empty set keeps %d slots, want %d", round, len(s.slots), minSlots)
		}
	}
}

// TestConnSetMemory checks what the set holds a connection for, which is
// the reason it is not a map: at most 24 bytes while it grows.
func TestConnSetMemory(t *testing.T) {
	var s connSet
	for n := 1; n <= 20000; n++ {
		s.add(new(Conn))
		if b := 8 * len(s.slots) / n; n >= minSlots && b > 24 {
			t.Fatalf("%d connections in %d slots: %d bytes each, want at most 24", n, len(s.slots), b)
		}
	}
}
