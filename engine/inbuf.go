package engine

// What a handler leaves unconsumed (a partial frame) is kept in the
// connection's input until more bytes come: a buffer from the engine's
// inputPool behind a pointer, which goes back to the pool once emptied.
// So an idle connection holds no buffer, whatever it once left, and pays
// 8 bytes for the field, while a steady load of partial frames allocates
// nothing.

// inputSizes are the size classes of the pooled input buffers. A
// connection that leaves more than the largest grows a buffer of its own
// by append, which is dropped once emptied.
var inputSizes = [...]int{512, maxKeptInput}

// maxKeptInput is the largest input buffer the pool takes back.
const maxKeptInput = 4 << 10

// inbuf is a connection's leftover input.
type inbuf struct{ b []byte }

// bytes returns in's bytes; none for a nil in.
func (in *inbuf) bytes() []byte {
	if in == nil {
		return nil
	}
	return in.b
}

// inputPool recycles inputs across an engine's connections (see
// freeLists).
type inputPool struct{ freeLists[*inbuf] }

// get returns an empty input with room for n bytes, n at most
// maxKeptInput.
func (p *inputPool) get(n int) *inbuf {
	class := 0
	for inputSizes[class] < n {
		class++
	}
	if in, ok := p.pop(class); ok {
		return in
	}
	return &inbuf{b: make([]byte, 0, inputSizes[class])}
}

// put takes in back, emptied, in the largest class its buffer holds; an
// input whose buffer is smaller than every class, or larger than
// maxKeptInput, is dropped.
func (p *inputPool) put(in *inbuf) {
	if cap(in.b) > maxKeptInput {
		return
	}
	for class := len(inputSizes) - 1; class >= 0; class-- {
		if size := inputSizes[class]; cap(in.b) >= size {
			in.b = in.b[:0:size]
			p.push(class, in)
			return
		}
	}
}

// append returns in (nil for none) followed by data: in's own buffer
// while they fit, else a pooled one while they fit the largest class (in
// goes back), else in's buffer grown by append.
func (p *inputPool) append(in *inbuf, data []byte) *inbuf {
	n := len(in.bytes()) + len(data)
	switch {
	case n == 0:
		return in
	case in != nil && n <= cap(in.b):
		in.b = append(in.b, data...)
		return in
	case n <= maxKeptInput:
		out := p.get(n)
		out.b = append(append(out.b, in.bytes()...), data...)
		if in != nil {
			p.put(in)
		}
		return out
	}
	if in == nil {
		in = new(inbuf)
	}
	in.b = append(in.b, data...) // reallocates: n > cap(in.b)
	return in
}

// keep leaves rest, what OnData did not consume, in *in: moved to the
// front when it is a view of (*in).b (owned), copied into a pooled input
// otherwise. An emptied input goes back to the pool (or, grown past
// maxKeptInput, is dropped).
func (p *inputPool) keep(in **inbuf, rest []byte, owned bool) {
	switch {
	case len(rest) == 0:
		if *in != nil {
			p.put(*in)
			*in = nil
		}
	case owned:
		(*in).b = (*in).b[:copy((*in).b, rest)]
	case len(rest) <= maxKeptInput: // not owned: *in is nil (an empty input is)
		out := p.get(len(rest))
		out.b = append(out.b, rest...)
		*in = out
	default:
		*in = &inbuf{b: append([]byte(nil), rest...)}
	}
}
