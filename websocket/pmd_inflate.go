package websocket

import (
	"compress/flate"
	"errors"
	"io"
	"iter"
	"sync"
)

// inflateStream decompresses a message as its payload arrives, for a
// StreamHandler, yielding at most inflatePiece bytes at a time.
//
// compress/flate's reader pulls its input, and keeps the first error its
// source returns: it cannot be told "nothing yet, more later". So unless
// the message's payload is all there when its output is first asked for
// (a message of one frame, received whole: then the loop reads flate
// itself), it runs in a coroutine (iter.Pull), whose source, out of
// input, yields nil to the loop and resumes when the loop gives it more.
// The coroutine runs only while the loop waits for it (a switch, not a
// second thread), so the flate state and the callbacks stay the loop's.
// While a message streams it holds a pooled flate reader (about 44 KiB,
// its 32 KiB window included), out, and the coroutine's stack; all go
// back at its end.
type inflateStream struct {
	d    *decompressor
	next func() ([]byte, bool) // the coroutine's; nil until one is needed
	stop func()

	// The coroutine's side: what it reads, and how it yields.
	yield   func([]byte) bool
	src     []byte  // payload given by the loop and not yet read, still masked; valid during one OnData
	mask    [4]byte // src's frame's key
	maskPos int     // where in mask src's first byte is
	last    bool    // src ends the message: inflateTail follows it
	tail    int     // bytes of inflateTail read
	err     error   // why the coroutine ended, if not at the end of the DEFLATE data

	ended      bool // the DEFLATE data ended: what follows in the message is ignored
	flateEnded bool // without the coroutine: flate's last read ended the data
	out        [inflatePiece]byte
}

// inflatePiece bounds a piece of a streamed compressed message.
const inflatePiece = 16 << 10

// errStopped ends a coroutine whose message was abandoned (the
// connection closed mid-message).
var errStopped = errors.New("websocket: streamed message abandoned")

var inflateStreams = sync.Pool{New: func() any { return new(inflateStream) }}

// newInflateStream returns a stream primed with dict (nil for none).
func newInflateStream(dict []byte) *inflateStream {
	s := inflateStreams.Get().(*inflateStream)
	s.d = getDecompressor(nil, nil)
	// flate's Resetter never fails; it copies dict.
	s.d.fr.(flate.Resetter).Reset(s, dict)
	return s
}

// run is the coroutine: it yields each piece flate gives, and ends at the
// end of the DEFLATE data or on an error.
func (s *inflateStream) run(yield func([]byte) bool) {
	s.yield = yield
	for {
		piece, ok := s.read()
		if piece != nil && !yield(piece) || !ok {
			return
		}
	}
}

// read reads a piece from flate (nil if none came); ok is false at the
// end of the DEFLATE data or on an error (then in s.err).
func (s *inflateStream) read() (piece []byte, ok bool) {
	n, err := s.d.fr.Read(s.out[:])
	if n > 0 {
		piece = s.out[:n]
	}
	if err != nil && err != io.EOF {
		s.err = err
	}
	return piece, err == nil
}

// Read and ReadByte are flate's source (a flate.Reader, so that flate
// reads no byte it does not need): src unmasked as it is read, then
// inflateTail once the message's last byte was given.
func (s *inflateStream) Read(p []byte) (int, error) {
	if err := s.wait(); err != nil {
		return 0, err
	}
	if len(s.src) > 0 {
		n := copy(p, s.src)
		s.maskPos = maskBytes(s.mask, s.maskPos, p[:n])
		s.src = s.src[n:]
		return n, nil
	}
	if s.tail == len(inflateTail) {
		return 0, io.EOF
	}
	n := copy(p, inflateTail[s.tail:])
	s.tail += n
	return n, nil
}

func (s *inflateStream) ReadByte() (byte, error) {
	if err := s.wait(); err != nil {
		return 0, err
	}
	if len(s.src) > 0 {
		b := s.src[0] ^ s.mask[s.maskPos]
		s.maskPos = (s.maskPos + 1) & 3
		s.src = s.src[1:]
		return b, nil
	}
	if s.tail == len(inflateTail) {
		return 0, io.EOF
	}
	b := inflateTail[s.tail]
	s.tail++
	return b, nil
}

// wait yields to the loop until there is input, or the message's end.
func (s *inflateStream) wait() error {
	for len(s.src) == 0 && !s.last {
		if !s.yield(nil) {
			return errStopped
		}
	}
	return nil
}

// give hands the coroutine p, the next payload bytes, masked with mask
// from pos; last when they end the message. p must stay valid until take.
func (s *inflateStream) give(p []byte, mask [4]byte, pos int, last bool) {
	s.src, s.mask, s.maskPos, s.last = p, mask, pos, last
}

// take returns how many bytes of give's p the coroutine has read and the
// mask position after them, and forgets p.
func (s *inflateStream) take(p []byte) (used, pos int) {
	used = len(p) - len(s.src)
	s.src = nil
	return used, s.maskPos
}

// pull runs the coroutine until it has a piece of output, valid until
// the next pull, or needs more input than it was given (nil). done
// reports that the DEFLATE data ended, well (err nil) or not.
func (s *inflateStream) pull() (piece []byte, done bool, err error) {
	switch {
	case s.ended:
		return nil, true, nil
	case s.next == nil && s.last:
		// All the payload is there: flate cannot run out of input, and
		// the loop reads it itself, piece by piece, until its end.
		return s.direct()
	case s.next == nil:
		s.next, s.stop = iter.Pull(s.run)
	}
	piece, ok := s.next()
	if !ok {
		return s.end()
	}
	return piece, false, nil
}

// direct is pull without the coroutine.
func (s *inflateStream) direct() (piece []byte, done bool, err error) {
	if s.flateEnded {
		return s.end()
	}
	piece, ok := s.read()
	s.flateEnded = !ok
	if piece == nil {
		return s.end()
	}
	return piece, false, nil
}

// end is pull's answer once the DEFLATE data ended.
func (s *inflateStream) end() (piece []byte, done bool, err error) {
	s.ended = true
	if s.err != nil {
		return nil, true, corruptError(s.err)
	}
	return nil, true, nil
}

// release ends the coroutine if it has not ended, and gives the flate
// reader and s back to their pools: s is unusable after.
func (s *inflateStream) release() {
	if s.stop != nil {
		s.stop()
	}
	s.d.fr.(flate.Resetter).Reset(&s.d.in, nil) // (holding no reference to s)
	putDecompressor(s.d)
	*s = inflateStream{}
	inflateStreams.Put(s)
}
