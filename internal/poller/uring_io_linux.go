package poller

import "syscall"

// urIO is what a tag's operations hold while they hold Go memory: the
// owner's receive buffer, the send's buffers and progress, and input a
// multishot brought while the owner was not reading. A tag takes one from
// the backend's free list when it first needs one (io) and gives it back
// once nothing is left in it (releaseIO), so an idle connection, whose
// multishot receive uses the buffer ring, holds none. Records keep their
// msghdr and the capacity of accepted for the next tag.
type urIO struct {
	rbuf []byte
	// spill holds data a multishot receive brought while the owner was not
	// reading, copied out of the buffer ring so it is never held there.
	spill    []byte
	spillOff int           // bytes of spill already served
	accepted []int         // descriptors a multishot accept brought while no one accepted
	rend     syscall.Errno // how the receive side ended after spill: 0 none, endEOF, or an errno

	sbufs [][]byte
	sent  int
	total int
	msg   *urMsg
	zres  int32 // a zero-copy send's result, held until its notification
}

// empty reports whether r holds nothing for its tag.
func (r *urIO) empty() bool {
	return r.rbuf == nil && r.spill == nil && len(r.accepted) == 0 && r.rend == 0 &&
		r.sbufs == nil && r.zres == 0
}

// rec returns st's record, nil if it has none.
func (b *uringBackend) rec(st *urState) *urIO {
	if st.io == 0 {
		return nil
	}
	return b.ios[st.io-1]
}

// io returns st's record, taking one if it has none. The records are
// kept in ios and a tag names its own by index, so that no Go pointer is
// in a urState and it stays small.
func (b *uringBackend) io(st *urState) *urIO {
	if st.io == 0 {
		if n := len(b.ioFree); n > 0 {
			st.io = b.ioFree[n-1]
			b.ioFree = b.ioFree[:n-1]
		} else {
			b.ios = append(b.ios, new(urIO))
			st.io = uint32(len(b.ios))
		}
	}
	return b.ios[st.io-1]
}

// releaseIO gives st's record back once it holds nothing.
func (b *uringBackend) releaseIO(st *urState) {
	if r := b.rec(st); r != nil && r.empty() {
		r.spillOff = 0
		b.ioFree = append(b.ioFree, st.io)
		st.io = 0
	}
}

// recvBuf returns the owner's buffer of st's receive, nil for the ring's
// or the Provider's.
func (b *uringBackend) recvBuf(st *urState) []byte {
	if r := b.rec(st); r != nil {
		return r.rbuf
	}
	return nil
}

// setRecvBuf records buf as the buffer of st's receive.
func (b *uringBackend) setRecvBuf(st *urState, buf []byte) {
	if buf != nil {
		b.io(st).rbuf = buf
	} else if r := b.rec(st); r != nil {
		r.rbuf = nil
		b.releaseIO(st)
	}
}

// spilled returns the bytes st's spill holds, served or not.
func (b *uringBackend) spilled(st *urState) int {
	if r := b.rec(st); r != nil {
		return len(r.spill)
	}
	return 0
}

// waiting returns the accepted descriptors st holds.
func (b *uringBackend) waiting(st *urState) int {
	if r := b.rec(st); r != nil {
		return len(r.accepted)
	}
	return 0
}

func (b *uringBackend) hasSpill(st *urState) bool {
	r := b.rec(st)
	return r != nil && (len(r.spill) > 0 || r.rend != 0 || len(r.accepted) > 0)
}
