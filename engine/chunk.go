package engine

import (
	"sync"
	"time"
)

// chunkSizes are the sizes of the pieces output is queued in. A queue
// starts with the smallest piece that holds the write and grows by
// class: a connection with a small reply waiting (every batched write on
// io_uring) holds a small piece, not the largest, while a queue that
// grows reaches pieces large enough to keep the send's vector short.
var chunkSizes = [...]int{1 << 10, 4 << 10, 16 << 10}

// chunk is a piece of a connection's output queue: bytes [r, w) of buf are
// queued. Writers append at w; the loop consumes from r.
type chunk struct {
	buf   []byte
	r, w  int
	class uint8 // index in chunkSizes
}

// chunkPool recycles chunks across an engine's connections, so an idle
// connection holds none and steady-state writes allocate nothing. A locked
// stack per size rather than a sync.Pool, which the garbage collector
// empties on every cycle.
//
// The pool shrinks on its own clock instead: trim, called every
// trimInterval, lets go of as many chunks of a class as were never taken
// during the interval (low is the fewest the stack held since the last
// trim). A steady load keeps what it uses; what a burst of slow readers
// left behind is gone one interval after the burst.
type chunkPool struct {
	mu   sync.Mutex
	free [len(chunkSizes)][]*chunk
	low  [len(chunkSizes)]int
}

// trimInterval is how often the pool lets go of the chunks nobody took.
const trimInterval = time.Second

// get returns a chunk of the smallest class of at least from that holds
// n bytes, or of the largest class.
func (p *chunkPool) get(n int, from uint8) *chunk {
	class := from
	for int(class) < len(chunkSizes)-1 && chunkSizes[class] < n {
		class++
	}
	p.mu.Lock()
	free := p.free[class]
	if k := len(free); k > 0 {
		ch := free[k-1]
		free[k-1] = nil
		p.free[class] = free[:k-1]
		p.low[class] = min(p.low[class], k-1)
		p.mu.Unlock()
		return ch
	}
	p.low[class] = 0
	p.mu.Unlock()
	return &chunk{buf: make([]byte, chunkSizes[class]), class: class}
}

func (p *chunkPool) put(ch *chunk) {
	ch.r, ch.w = 0, 0
	p.mu.Lock()
	p.free[ch.class] = append(p.free[ch.class], ch)
	p.mu.Unlock()
}

// nextClass is the class of the chunk that follows last in a queue: one
// up, so a queue that keeps growing reaches the largest pieces.
func nextClass(last *chunk) uint8 {
	if last == nil {
		return 0
	}
	return min(last.class+1, uint8(len(chunkSizes)-1))
}

// trim drops, per class, the chunks that stayed unused since the last
// trim: the bottom of the stack, which get reaches last.
func (p *chunkPool) trim() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for class, free := range p.free {
		n := p.low[class]
		clear(free[:n])
		free = free[:copy(free, free[n:])]
		if cap(free) > 2*len(free)+64 {
			free = append([]*chunk(nil), free...) // let a large array go too
		}
		p.free[class], p.low[class] = free, len(free)
	}
}

// pooled returns the bytes of the free chunks.
func (p *chunkPool) pooled() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for class, free := range p.free {
		n += len(free) * chunkSizes[class]
	}
	return n
}
