package aio

import "sync/atomic"

// minSwapRead is the least space a nil-buffer read is given (or the whole
// chunk, if chunks are smaller). gaio fell back to 16 bytes when its swap
// buffer was full; gale moves to a free chunk, or parks the read until
// WaitIO releases one.
const minSwapRead = 4096

// swapChunk is one piece of a loop's swap buffer.
//
// Lifetime: bytes received into a chunk belong to the completion that
// carries them until WaitIO is called again after returning it. refs counts
// such completions, received or delivered but not yet released: the loop
// adds one per read, WaitIO subtracts one per released result. off is the
// loop's fill offset and is reset only when refs is 0, so no byte a caller
// can still see is ever overwritten.
type swapChunk struct {
	buf  []byte
	off  int // loop goroutine only
	refs atomic.Int32
}

// swap is a loop's swap buffer: up to max chunks of size bytes, allocated
// as needed and kept. It is the loop's poller.Provider.
type swap struct {
	size, min, max int
	chunks         []*swapChunk
	cur            int
}

func newSwap(size, max int) swap {
	return swap{size: size, min: min(size, minSwapRead), max: max}
}

// Provide returns the free tail of the current chunk, or a released chunk,
// or a new one; nil when every chunk is in use and none may be added.
func (s *swap) Provide() ([]byte, int) {
	if len(s.chunks) > 0 {
		c := s.chunks[s.cur]
		if c.refs.Load() == 0 {
			c.off = 0
		}
		if len(c.buf)-c.off >= s.min {
			return c.buf[c.off:], s.cur
		}
	}
	for i, c := range s.chunks {
		if c.refs.Load() == 0 {
			c.off, s.cur = 0, i
			return c.buf, i
		}
	}
	if len(s.chunks) < s.max {
		s.chunks = append(s.chunks, &swapChunk{buf: make([]byte, s.size)})
		s.cur = len(s.chunks) - 1
		return s.chunks[s.cur].buf, s.cur
	}
	return nil, -1
}

// Commit records n bytes received into chunk id.
func (s *swap) Commit(id, n int) {
	c := s.chunks[id]
	c.off += n
	c.refs.Add(1)
}

// hasSpace reports whether Provide would succeed now.
func (s *swap) hasSpace() bool {
	if len(s.chunks) < s.max {
		return true
	}
	if c := s.chunks[s.cur]; len(c.buf)-c.off >= s.min {
		return true
	}
	for _, c := range s.chunks {
		if c.refs.Load() == 0 {
			return true
		}
	}
	return false
}

// bytes returns the memory the swap buffer holds.
func (s *swap) bytes() int { return len(s.chunks) * s.size }

// HandsOff tells the io_uring backend that the loop's completions go to
// the WaitIO goroutine, so the loop is not locked to a thread.
func (s *swap) HandsOff() bool { return true }
