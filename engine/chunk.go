package engine

import "time"

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
// connection holds none and steady-state writes allocate nothing (see
// freeLists, which also says how the pool shrinks).
type chunkPool struct{ freeLists[*chunk] }

// trimInterval is how often the engine's pools let go of what nobody took.
const trimInterval = time.Second

// get returns a chunk of the smallest class of at least from that holds
// n bytes, or of the largest class.
func (p *chunkPool) get(n int, from uint8) *chunk {
	class := from
	for int(class) < len(chunkSizes)-1 && chunkSizes[class] < n {
		class++
	}
	if ch, ok := p.pop(int(class)); ok {
		return ch
	}
	return &chunk{buf: make([]byte, chunkSizes[class]), class: class}
}

func (p *chunkPool) put(ch *chunk) {
	ch.r, ch.w = 0, 0
	p.push(int(ch.class), ch)
}

// nextClass is the class of the chunk that follows last in a queue: one
// up, so a queue that keeps growing reaches the largest pieces.
func nextClass(last *chunk) uint8 {
	if last == nil {
		return 0
	}
	return min(last.class+1, uint8(len(chunkSizes)-1))
}

// pooled returns the bytes of the free chunks.
func (p *chunkPool) pooled() int {
	n := 0
	for class, k := range p.counts() {
		if class < len(chunkSizes) {
			n += k * chunkSizes[class]
		}
	}
	return n
}
