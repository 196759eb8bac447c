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

// io returns st's record, taking one if it has none.
func (b *uringBackend) io(st *urState) *urIO {
	if st.io == nil {
		if n := len(b.ioFree); n > 0 {
			st.io = b.ioFree[n-1]
			b.ioFree[n-1] = nil
			b.ioFree = b.ioFree[:n-1]
		} else {
			st.io = new(urIO)
		}
	}
	return st.io
}

// releaseIO gives st's record back once it holds nothing.
func (b *uringBackend) releaseIO(st *urState) {
	if r := st.io; r != nil && r.empty() {
		r.spillOff = 0
		b.ioFree = append(b.ioFree, r)
		st.io = nil
	}
}

// recvBuf returns the owner's buffer of st's receive, nil for the ring's
// or the Provider's.
func (st *urState) recvBuf() []byte {
	if st.io == nil {
		return nil
	}
	return st.io.rbuf
}

// setRecvBuf records buf as the buffer of st's receive.
func (b *uringBackend) setRecvBuf(st *urState, buf []byte) {
	if buf != nil {
		b.io(st).rbuf = buf
	} else if st.io != nil {
		st.io.rbuf = nil
		b.releaseIO(st)
	}
}

// spilled returns the bytes st's spill holds, served or not.
func (st *urState) spilled() int {
	if st.io == nil {
		return 0
	}
	return len(st.io.spill)
}

// waiting returns the accepted descriptors st holds.
func (st *urState) waiting() int {
	if st.io == nil {
		return 0
	}
	return len(st.io.accepted)
}

func (st *urState) hasSpill() bool {
	r := st.io
	return r != nil && (len(r.spill) > 0 || r.rend != 0 || len(r.accepted) > 0)
}
