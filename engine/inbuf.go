package engine

// What a handler leaves unconsumed (a partial frame) is kept in the
// connection's input buffer until more bytes come. The buffers come from
// the engine's inputPool and go back to it once emptied, so an idle
// connection holds none, whatever it once left, while a steady load of
// partial frames allocates nothing.

// inputSizes are the size classes of the pooled input buffers. A
// connection that leaves more than the largest grows a buffer of its own
// by append, which is dropped once emptied.
var inputSizes = [...]int{512, maxKeptInput}

// maxKeptInput is the largest input buffer the pool takes back.
const maxKeptInput = 4 << 10

// inputPool recycles input buffers across an engine's connections (see
// freeLists).
type inputPool struct{ freeLists[[]byte] }

// get returns an empty buffer with room for n bytes, n at most
// maxKeptInput.
func (p *inputPool) get(n int) []byte {
	class := 0
	for inputSizes[class] < n {
		class++
	}
	if b, ok := p.pop(class); ok {
		return b
	}
	return make([]byte, 0, inputSizes[class])
}

// put takes b back, emptied, in the largest class it holds; a buffer
// smaller than every class, or larger than maxKeptInput, is dropped.
func (p *inputPool) put(b []byte) {
	if cap(b) > maxKeptInput {
		return
	}
	for class := len(inputSizes) - 1; class >= 0; class-- {
		if size := inputSizes[class]; cap(b) >= size {
			p.push(class, b[:0:size])
			return
		}
	}
}

// append returns kept followed by data, in a buffer from the pool while
// they fit the largest class (kept's goes back when they outgrow it),
// grown by append beyond.
func (p *inputPool) append(kept, data []byte) []byte {
	n := len(kept) + len(data)
	if n <= cap(kept) {
		return append(kept, data...)
	}
	var b []byte
	if n <= maxKeptInput {
		b = append(append(p.get(n), kept...), data...)
	} else {
		b = append(kept, data...) // reallocates: n > cap(kept)
	}
	p.put(kept)
	return b
}

// keep leaves rest, what OnData did not consume, in *kept: moved to the
// front when it is a view of *kept (owned), copied into a buffer from the
// pool otherwise. An emptied buffer goes back to the pool (or, grown past
// maxKeptInput, is dropped).
func (p *inputPool) keep(kept *[]byte, rest []byte, owned bool) {
	switch {
	case len(rest) == 0:
		p.put(*kept)
		*kept = nil
	case owned:
		*kept = (*kept)[:copy(*kept, rest)]
	case len(rest) <= maxKeptInput:
		p.put(*kept)
		*kept = append(p.get(len(rest)), rest...)
	default:
		*kept = append((*kept)[:0], rest...)
	}
}
