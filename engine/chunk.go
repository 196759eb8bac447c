package engine

import "sync"

// chunkSizes are the sizes of the pieces output is queued in. A queue
// starts with the smallest piece that holds the write and grows by
// class: a connection with a small reply waiting (every batched write on
// io_uring) holds a small piece, not the largest; 8,192 connections
// echoing 1 KiB each held 16 KiB apiece (128 MiB) with one size.
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
// empties.
type chunkPool struct {
	mu   sync.Mutex
	free [len(chunkSizes)][]*chunk
}

// get returns a chunk of the smallest class of at least min that holds n
// bytes, or of the largest class.
func (p *chunkPool) get(n int, min uint8) *chunk {
	class := min
	for int(class) < len(chunkSizes)-1 && chunkSizes[class] < n {
		class++
	}
	p.mu.Lock()
	free := p.free[class]
	if k := len(free); k > 0 {
		ch := free[k-1]
		free[k-1] = nil
		p.free[class] = free[:k-1]
		p.mu.Unlock()
		return ch
	}
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
