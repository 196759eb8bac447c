package loop

import "sync/atomic"

// Set is the set of a loop's connections, kept by the owner (aio or
// engine) on the loop goroutine: each member records its position, so
// Add and Remove take constant time. Len is safe from any goroutine;
// every other method is for the loop goroutine only.
type Set[T comparable] struct {
	items []T
	n     atomic.Int64
	pos   func(T) *int32 // where a member keeps its position (32 bits: less room in each member)
}

// NewSet returns an empty set whose members keep their position where pos
// says.
func NewSet[T comparable](pos func(T) *int32) Set[T] { return Set[T]{pos: pos} }

// Add adds x, which is not a member.
func (s *Set[T]) Add(x T) {
	*s.pos(x) = int32(len(s.items))
	s.items = append(s.items, x)
	s.n.Add(1)
}

// Remove removes x, a member.
func (s *Set[T]) Remove(x T) {
	i, last := *s.pos(x), len(s.items)-1
	moved := s.items[last]
	s.items[i], *s.pos(moved) = moved, i
	var zero T
	s.items[last] = zero
	s.items = s.items[:last]
	s.n.Add(-1)
}

// Len returns the number of members. Safe from any goroutine.
func (s *Set[T]) Len() int { return int(s.n.Load()) }

// Last returns the member at the end of the set, or false when it is
// empty. Removing that member and asking again visits every member, even
// when closing one removes others.
func (s *Set[T]) Last() (T, bool) {
	if len(s.items) == 0 {
		var zero T
		return zero, false
	}
	return s.items[len(s.items)-1], true
}

// Members returns the members; the slice is valid until the next Add or
// Remove.
func (s *Set[T]) Members() []T { return s.items }
