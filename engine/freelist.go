package engine

import "sync"

// freeLists recycles values of T, sorted into size classes (at most
// maxClasses), across an engine's connections: a locked stack per class
// rather than a sync.Pool, which the garbage collector empties on every
// cycle. The output chunks (chunkPool), the output queues (queuePool) and
// the input buffers (inputPool) are each kept in one.
//
// The lists shrink on their own clock instead: trim, called every
// trimInterval, lets go of as many values of a class as were never taken
// during the interval (low is the fewest the stack held since the last
// trim). A steady load keeps what it uses; what a burst left behind is
// gone one interval after the burst.
type freeLists[T any] struct {
	mu   sync.Mutex
	free [maxClasses][]T
	low  [maxClasses]int
}

// maxClasses bounds the size classes of a freeLists.
const maxClasses = 3

// pop takes a value of class, if the list holds one.
func (f *freeLists[T]) pop(class int) (v T, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	free := f.free[class]
	k := len(free)
	if k == 0 {
		f.low[class] = 0
		return v, false
	}
	v = free[k-1]
	var zero T
	free[k-1] = zero
	f.free[class] = free[:k-1]
	f.low[class] = min(f.low[class], k-1)
	return v, true
}

// push gives v, of class, back.
func (f *freeLists[T]) push(class int, v T) {
	f.mu.Lock()
	f.free[class] = append(f.free[class], v)
	f.mu.Unlock()
}

// trim drops, per class, the values that stayed unused since the last
// trim: the bottom of the stack, which pop reaches last.
func (f *freeLists[T]) trim() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for class, free := range f.free {
		n := f.low[class]
		clear(free[:n])
		free = free[:copy(free, free[n:])]
		if cap(free) > 2*len(free)+64 {
			free = append([]T(nil), free...) // let a large array go too
		}
		f.free[class], f.low[class] = free, len(free)
	}
}

// counts returns how many values each class holds.
func (f *freeLists[T]) counts() (n [maxClasses]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for class, free := range f.free {
		n[class] = len(free)
	}
	return n
}
