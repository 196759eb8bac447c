//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package poller

// fdIO holds the buffers of a descriptor's operations in flight.
type fdIO struct {
	recvBuf  []byte // nil for OpRecv: use the Provider
	sendBufs [][]byte
	sent     int // bytes of sendBufs already written
}

// ioRef names a record of an ioTable: its index plus one, 0 for none. An
// index rather than a pointer keeps fdState at 24 bytes.
type ioRef uint32

// ioTable holds the fdIO records, in pages so that a record stays where
// it is while the table grows; free lists the records no descriptor
// holds. It keeps as many records as were ever in use at once, so a
// steady load takes none anew.
type ioTable struct {
	recs pagedTable[fdIO]
	n    int     // records made
	free []ioRef // records to reuse
}

// of returns st's record, nil if it holds none.
func (t *ioTable) of(st *fdState) *fdIO {
	if st.io == 0 {
		return nil
	}
	return t.recs.at(int(st.io - 1))
}

// take gives st a record, reused if one is free.
func (t *ioTable) take(st *fdState) {
	if n := len(t.free); n > 0 {
		st.io = t.free[n-1]
		t.free = t.free[:n-1]
		return
	}
	t.recs.grow(t.n)
	t.n++
	st.io = ioRef(t.n)
}

// recvBuf returns the buffer of st's receive in flight, nil for the
// Provider's.
func (e *emul) recvBuf(st *fdState) []byte {
	if io := e.ios.of(st); io != nil {
		return io.recvBuf
	}
	return nil
}

// ioOf returns st's record, taking one if it has none.
func (e *emul) ioOf(st *fdState) *fdIO {
	if st.io == 0 {
		e.ios.take(st)
	}
	return e.ios.of(st)
}

// setRecvBuf records buf for st's receive (nil: the Provider's).
func (e *emul) setRecvBuf(st *fdState, buf []byte) {
	if buf != nil {
		e.ioOf(st).recvBuf = buf
	} else if io := e.ios.of(st); io != nil {
		io.recvBuf = nil
	}
}

// endRecv and endSend forget the buffers of st's side that completed, and
// give its record back once neither side holds one.
func (e *emul) endRecv(st *fdState) {
	if io := e.ios.of(st); io != nil {
		io.recvBuf = nil
		e.releaseIO(st)
	}
}

func (e *emul) endSend(st *fdState) {
	if io := e.ios.of(st); io != nil {
		io.sendBufs, io.sent = nil, 0
		e.releaseIO(st)
	}
}

func (e *emul) releaseIO(st *fdState) {
	if io := e.ios.of(st); io.recvBuf == nil && io.sendBufs == nil {
		e.ios.free = append(e.ios.free, st.io)
		st.io = 0
	}
}
