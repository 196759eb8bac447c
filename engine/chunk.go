package engine

import "sync"

// chunkSize is the size of the pieces output is queued in.
const chunkSize = 16 << 10

// chunk is a piece of a connection's output queue: bytes [r, w) of buf are
// queued. Writers append at w; the loop consumes from r.
type chunk struct {
	buf  []byte
	r, w int
}

// chunkPool recycles chunks across an engine's connections, so an idle
// connection holds none and steady-state writes allocate nothing. A locked
// stack rather than a sync.Pool, which the garbage collector empties.
type chunkPool struct {
	mu   sync.Mutex
	free []*chunk
}

func (p *chunkPool) get() *chunk {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		ch := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return ch
	}
	p.mu.Unlock()
	return &chunk{buf: make([]byte, chunkSize)}
}

func (p *chunkPool) put(ch *chunk) {
	ch.r, ch.w = 0, 0
	p.mu.Lock()
	p.free = append(p.free, ch)
	p.mu.Unlock()
}
