package poller

import (
	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

func (b *uringBackend) Recv(tag Tag, buf []byte) {
	st := b.submitRecv(tag, OpRecv)
	b.setRecvBuf(st, buf)
	b.kickRecv(st)
}

func (b *uringBackend) RecvFrom(tag Tag, buf []byte) {
	st := b.submitRecv(tag, OpRecvFrom)
	b.setRecvBuf(st, buf)
	b.kickRecv(st)
}

func (b *uringBackend) Accept(tag Tag) {
	b.kickRecv(b.submitRecv(tag, OpAccept))
}

// recvKind is the kernel operation that serves st's receive. A nil-buffer
// receive takes a buffer from the ring: a multishot one for a Transient
// provider's owner (engine), which reads again as soon as its callback
// returns, and a one-shot one for a copying provider's (aio), which asks
// again only after WaitIO and its own work: a multishot would go on
// receiving meanwhile, and the data would have to be spilled (copied,
// held and copied again) and served piece by piece.
func (b *uringBackend) recvKind(st *urState) uint8 {
	switch {
	case st.rop == OpAccept:
		return kAccept
	case st.rop == OpRecvFrom:
		return kPollIn
	case b.recvBuf(st) == nil && b.direct:
		return kRecvMulti
	case b.recvBuf(st) == nil:
		return kRecvOne
	}
	return kRecv
}

// kickRecv makes progress on st's receive: serve it from spilled data,
// end it if cancelled, or have the right kernel operation in flight.
func (b *uringBackend) kickRecv(st *urState) {
	if st.rop == 0 {
		return
	}
	if b.hasSpill(st) || (st.rcancel && st.rk == 0) {
		b.later = append(b.later, st.tag)
		return
	}
	want := b.recvKind(st)
	if st.rk != 0 {
		if st.rk != want && !st.rstop {
			// A multishot receive still runs but the owner now reads into
			// its own buffer: stop it; its last completion re-kicks.
			st.rstop = true
			b.cancel(makeUD(st.tag, st.rk))
		}
		return
	}
	switch want {
	case kRecvMulti, kRecvOne:
		if want == kRecvOne && b.readNow(st) {
			return
		}
		e := b.sqe(makeUD(st.tag, want))
		e.Opcode, e.FD, e.Flags = uring.OpRecv, st.fd, uring.SQEBufferSelect
		e.BufIndex = b.br.Group()
		if want == kRecvMulti {
			e.IOPrio = uring.RecvMultishot
			e.FileIndex = b.mlim // optlen: see recvLimit
		}
		if sock.Faulty() {
			b.injectFault(e, sock.FaultRead, int(st.fd))
		}
	case kRecv:
		e := b.sqe(makeUD(st.tag, kRecv))
		e.Opcode, e.FD = uring.OpRecv, st.fd
		if buf := b.recvBuf(st); len(buf) > 0 {
			e.Addr, e.Len = addrOf(buf), uint32(min(len(buf), 1<<30))
		}
		if sock.Faulty() {
			b.injectFault(e, sock.FaultRead, int(st.fd))
		}
	case kAccept:
		e := b.sqe(makeUD(st.tag, kAccept))
		e.Opcode, e.FD, e.IOPrio = uring.OpAccept, st.fd, uring.AcceptMultishot
		e.OpFlags = unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC
		if sock.Faulty() {
			b.injectFault(e, sock.FaultAccept, int(st.fd))
		}
	case kPollIn:
		if c, done := b.recvFrom(st); done {
			b.ready = append(b.ready, c)
			st.rop = 0
			b.setRecvBuf(st, nil)
			return
		}
		e := b.sqe(makeUD(st.tag, kPollIn))
		e.Opcode, e.FD, e.OpFlags = uring.OpPollAdd, st.fd, unix.POLLIN
	}
	st.rk = want
}

// recvDone handles a completion of st's receive-side kernel operation.
func (b *uringBackend) recvDone(st *urState, c uring.CQE, fn func(*Completion)) {
	more := c.Flags&uring.CQEFMore != 0
	if !more {
		st.rk, st.rstop = 0, false
	} else if sock.Faulty() {
		b.faultRunning(st, ud(c.UserData))
	}
	switch ud(c.UserData).kind() {
	case kRecvMulti, kRecvOne:
		b.multiDone(st, c, fn)
		return
	case kAccept:
		b.acceptDone(st, c, fn)
		return
	case kPollIn:
		b.kickRecv(st) // ready, or cancelled: try once more, or end
		return
	}
	// kRecv: a plain receive into the owner's buffer.
	if c.Res >= 0 {
		n := int(c.Res)
		b.finishRecv(st, Completion{Tag: st.tag, Op: OpRecv, N: n, Buf: b.recvBuf(st)[:n], BufID: -1}, fn)
		return
	}
	switch errno := unix.Errno(-c.Res); errno {
	case unix.ECANCELED, unix.EINTR, unix.EAGAIN:
		b.kickRecv(st) // resubmit, or end after a last attempt if cancelled
	default:
		b.finishRecv(st, Completion{Tag: st.tag, Op: OpRecv, Err: errno, BufID: -1}, fn)
	}
}

// multiDone handles a completion of a receive from the buffer ring,
// multishot or one-shot: data goes to the owner if it is reading (spilled
// otherwise), and an end of file or error is kept for the owner's next
// receive.
func (b *uringBackend) multiDone(st *urState, c uring.CQE, fn func(*Completion)) {
	tag := st.tag
	switch {
	case c.Flags&uring.CQEFBuffer != 0:
		data := b.bufData(c)
		if st.rop == OpRecv && b.recvBuf(st) == nil && !st.rcancel && !b.hasSpill(st) {
			b.serveData(st, data, fn)
		} else {
			b.spillData(st, data)
		}
		b.consumed(c)
	case c.Res == 0:
		b.io(st).rend = endEOF
	case c.Res < 0:
		switch errno := unix.Errno(-c.Res); errno {
		case unix.ENOBUFS:
			// The ring ran dry: the kernel ended the multishot. Re-arm it
			// once this batch has returned its buffers.
			b.starved = append(b.starved, tag)
			return
		case unix.ECANCELED, unix.EINTR, unix.EAGAIN:
		default:
			b.io(st).rend = errno
		}
	}
	if st = b.state(tag); st == nil {
		return // the callback removed the tag
	}
	if st.rk == kRecvMulti {
		if (st.rop != OpRecv || b.recvBuf(st) != nil) && b.spilled(st) >= spillMax {
			b.idle = append(b.idle, tag)
		} else if st.rop == OpRecv && b.recvBuf(st) == nil && b.hasSpill(st) {
			b.later = append(b.later, tag)
		}
		return
	}
	b.kickRecv(st)
}

// A multishot goes on while its owner is between two receives: what
// arrives meanwhile is spilled and served by the next receive. Past these
// bounds the owner is taken to have stopped (engine's backpressure pauses
// reading), and the multishot is cancelled until it asks again.
const (
	spillMax  = 64 << 10
	acceptMax = 64
)

// recvLimit is the byte limit a multishot receive is armed with where the
// kernel takes one (uring.RecvLimit, Linux 6.17). The multishot ends once
// it has brought that much, and kickRecv arms it again only if its owner
// is reading: a paused owner (engine's backpressure, PauseRead) holds at
// most recvLimit plus one provided buffer, less a byte, in spill, under
// 128 KiB with the ring's 32 KiB buffers, whatever its peer sends.
// Without a limit the cancel at spillMax comes too late to bound it: the
// kernel makes up to 32 receives each time the socket wakes the multishot
// (MULTISHOT_MAX_RETRY, io_uring/net.c), up to a buffer each, and a batch
// spilled about 1 MiB per paused connection. The limit costs the stream
// what the spill used to read ahead during each pause, and an arming per
// recvLimit bytes: measured with galebench's engine stream, 8 to 10 runs
// each, 64 KiB cost 6-7 % of its MB/s and 6-10 % more CPU per 64 KiB,
// 96 KiB 3-6 % and 3-5 %, and 256 KiB did no better on MB/s
// (docs/bench/gaps.md).
const recvLimit = 96 << 10

// emptySpill forgets st's spilled data, all served, and gives its array
// to the backend's spares: a connection that spilled once must not keep
// an array, or the memory held grows with the connections that ever
// spilled instead of with those spilling now. The spares are bounded by
// their total capacity, not by an array's: one batch can spill up to the
// buffer ring's size, and a loop that pauses a reader under a stream
// (engine's backpressure) spills that much at every pause, so dropping
// the large arrays made each pause allocate afresh.
func (b *uringBackend) emptySpill(st *urState) {
	r := b.rec(st)
	r.spillOff = 0
	if c := cap(r.spill); b.spareCap+c <= b.spareMax && len(b.spares) < maxSpares {
		b.spares = append(b.spares, r.spill[:0])
		b.spareCap += c
	}
	r.spill = nil
	b.releaseIO(st)
}

// spillData appends data to st's spill, in the largest spare array if st
// has none. Under a byte limit an array grows by doubling, but never past
// what one multishot can bring (spillBound), where append's growth factor
// and size classes could take it beyond.
func (b *uringBackend) spillData(st *urState, data []byte) {
	r := b.io(st)
	if r.spill == nil && len(b.spares) > 0 {
		r.spill = b.takeSpare()
	}
	if need := len(r.spill) + len(data); need > cap(r.spill) && b.mlim > 0 {
		a := make([]byte, len(r.spill), max(need, min(2*cap(r.spill), b.spillBound())))
		copy(a, r.spill)
		r.spill = a
	}
	r.spill = append(r.spill, data...)
}

// spillBound returns the most a multishot receive armed with a byte limit
// can bring beyond its owner's receives: the limit and one provided
// buffer, less a byte (the kernel does not cut the last receive short).
func (b *uringBackend) spillBound() int { return int(b.mlim) + b.br.Size() - 1 }

// takeSpare removes the spare array of the largest capacity and returns
// it, empty.
func (b *uringBackend) takeSpare() []byte {
	k := 0
	for i, a := range b.spares {
		if cap(a) > cap(b.spares[k]) {
			k = i
		}
	}
	a := b.spares[k]
	last := len(b.spares) - 1
	b.spares[k] = b.spares[last]
	b.spares[last] = nil
	b.spares = b.spares[:last]
	b.spareCap -= cap(a)
	return a
}

// maxSpares bounds the spill arrays a backend keeps for reuse.
const maxSpares = 64

// serveData completes st's nil-buffer receive with data from the ring:
// lent as is to a Transient provider's owner, copied into the Provider's
// space otherwise (what does not fit is spilled).
func (b *uringBackend) serveData(st *urState, data []byte, fn func(*Completion)) {
	if b.direct {
		b.finishRecv(st, Completion{Tag: st.tag, Op: OpRecv, N: len(data), Buf: data, BufID: -1}, fn)
		return
	}
	space, id := b.prov.Provide()
	if space == nil {
		b.spillData(st, data)
		b.finishRecv(st, Completion{Tag: st.tag, Op: OpRecv, Err: NoSpace, BufID: -1}, fn)
		return
	}
	k := copy(space, data)
	b.prov.Commit(id, k)
	if k < len(data) {
		b.spillData(st, data[k:])
	}
	b.finishRecv(st, Completion{Tag: st.tag, Op: OpRecv, N: k, Buf: space[:k], BufID: id}, fn)
}

// bufData returns the bytes a completion put in a provided buffer.
func (b *uringBackend) bufData(c uring.CQE) []byte {
	id := c.BufID()
	off := 0
	if b.br.Inc() {
		off = b.bufOff[id]
	}
	return b.br.Buf(id)[off : off+int(c.Res)]
}

// consumed records that the bytes of c's buffer were used: the buffer goes
// back to the ring unless the kernel goes on filling it (incremental
// consumption, CQEFBufMore).
func (b *uringBackend) consumed(c uring.CQE) {
	id := c.BufID()
	b.trim.touches++
	if b.br.Inc() && c.Flags&uring.CQEFBufMore != 0 {
		b.bufOff[id] += int(c.Res)
		return
	}
	b.bufOff[id] = 0
	b.br.Add(id)
	b.publish = true
}

// acceptDone handles a completion of a multishot accept.
func (b *uringBackend) acceptDone(st *urState, c uring.CQE, fn func(*Completion)) {
	tag := st.tag
	if c.Res >= 0 {
		fd := int(c.Res)
		if st.rop == OpAccept && !st.rcancel && !b.hasSpill(st) {
			b.finishRecv(st, b.acceptCompletion(tag, fd), fn)
		} else {
			r := b.io(st)
			r.accepted = append(r.accepted, fd)
		}
	} else {
		switch errno := unix.Errno(-c.Res); errno {
		case unix.ECANCELED, unix.EINTR, unix.EAGAIN, unix.ECONNABORTED:
		default: // EMFILE, ENFILE, ENOBUFS, ENOMEM...: the owner decides
			b.io(st).rend = errno
		}
	}
	if st = b.state(tag); st == nil {
		return
	}
	if st.rk == kAccept {
		if st.rop != OpAccept && b.waiting(st) >= acceptMax {
			b.idle = append(b.idle, tag)
		} else if b.hasSpill(st) {
			b.later = append(b.later, tag)
		}
		return
	}
	b.kickRecv(st)
}

// acceptCompletion completes an accept with fd. A multishot accept
// brings no address: getpeername(2) into the backend's own space (no
// allocation for an IPv4 or IPv6 peer).
func (b *uringBackend) acceptCompletion(tag Tag, fd int) Completion {
	peer, from, _ := sock.PeerName(fd, &b.rsa)
	return Completion{Tag: tag, Op: OpAccept, N: fd, BufID: -1, Peer: peer, From: from}
}

// stopIdle cancels a multishot whose owner did not ask for more during the
// batch that served it: the kernel would otherwise go on taking data (or
// connections) no one wants yet.
func (b *uringBackend) stopIdle(st *urState) {
	if st.rstop || st.rk == 0 || st.rk == b.recvKind(st) && st.rop != 0 {
		return
	}
	st.rstop = true
	b.cancel(makeUD(st.tag, st.rk))
}

// serveRecv produces st's receive completion from outside the kernel:
// spilled data first, then a kept end of file or error, then, for a
// cancelled receive, one last non-blocking attempt. It runs at delivery,
// so a Provider's space goes straight to the callback.
func (b *uringBackend) serveRecv(st *urState, fn func(*Completion)) {
	if st.rop == 0 || st.rcancel && st.rop == OpRecv && st.rk != 0 {
		return // a cancelled receive waits for its kernel operation's end (Cancel)
	}
	if c, ok := b.fromSpill(st); ok {
		b.finishRecv(st, c, fn)
		return
	}
	if st.rcancel && st.rk == 0 {
		b.finishRecv(st, b.lastRecv(st), fn)
		return
	}
	b.kickRecv(st)
}

func (b *uringBackend) fromSpill(st *urState) (Completion, bool) {
	c := Completion{Tag: st.tag, Op: st.rop, BufID: -1}
	r := b.rec(st)
	if r == nil {
		return c, false
	}
	if st.rop == OpAccept {
		if len(r.accepted) > 0 {
			fd := r.accepted[0]
			r.accepted = r.accepted[:copy(r.accepted, r.accepted[1:])]
			b.releaseIO(st)
			return b.acceptCompletion(st.tag, fd), true
		}
	} else if st.rop == OpRecv && len(r.spill) > 0 {
		if st.rcancel && r.rbuf == nil && b.direct {
			// A cancelled receive brings every byte held, lent as the
			// ring's buffers are: its owner may hand the socket over, and
			// what stayed would go with the tag. The array goes with it.
			c.Buf = r.spill[r.spillOff:]
			c.N = len(c.Buf)
			r.spill, r.spillOff = nil, 0
			b.releaseIO(st)
			return c, true
		}
		buf := r.rbuf
		if buf == nil {
			if buf, c.BufID = b.prov.Provide(); buf == nil {
				c.Err = NoSpace
				return c, true
			}
		}
		if r.rbuf == nil && b.direct {
			// Lent, as the ring's buffers are, in pieces no larger than
			// the owner's own buffer: no copy. The array may go back to
			// the spares below; nothing spills into it before the
			// callback has returned (delivery does not reenter).
			c.N = min(len(buf), len(r.spill)-r.spillOff)
			c.Buf, c.BufID = r.spill[r.spillOff:r.spillOff+c.N], -1
		} else {
			c.N = copy(buf, r.spill[r.spillOff:])
			c.Buf = buf[:c.N]
		}
		// Consumed from the front without moving the rest: a large spill
		// served in small pieces would otherwise be copied over and over.
		if r.spillOff += c.N; r.spillOff == len(r.spill) {
			b.emptySpill(st)
		}
		if c.BufID >= 0 {
			b.prov.Commit(c.BufID, c.N)
		}
		return c, true
	}
	if r.rend != 0 && st.rop != OpRecvFrom {
		if r.rend != endEOF {
			c.Err = r.rend
		}
		r.rend = 0
		b.releaseIO(st)
		return c, true
	}
	return c, false
}

// lastRecv makes the last non-blocking attempt of a cancelled receive:
// data already there still counts.
func (b *uringBackend) lastRecv(st *urState) Completion {
	c := Completion{Tag: st.tag, Op: st.rop, Err: unix.ECANCELED, BufID: -1}
	switch st.rop {
	case OpAccept:
		if fd, peer, from, err := sock.AcceptPeer(int(st.fd), &b.rsa); err == nil {
			c = Completion{Tag: st.tag, Op: OpAccept, N: fd, BufID: -1, Peer: peer, From: from}
		}
	case OpRecvFrom:
		if got, done := b.recvFrom(st); done {
			c = got
		}
	case OpRecv:
		buf, id := b.recvBuf(st), -1
		if buf == nil {
			if buf, id = b.prov.Provide(); buf == nil {
				return c
			}
		}
		n, errno := sock.Read(int(st.fd), buf)
		if errno == unix.EAGAIN {
			return c
		}
		if id >= 0 && n > 0 {
			b.prov.Commit(id, n)
		}
		c = Completion{Tag: st.tag, Op: OpRecv, N: n, Err: errno, Buf: buf[:n], BufID: id}
	}
	return c
}

// recvFrom tries one datagram receive; done is false on EAGAIN.
func (b *uringBackend) recvFrom(st *urState) (Completion, bool) {
	for {
		switch c, errno := recvFrom(int(st.fd), st.tag, b.recvBuf(st)); errno {
		case unix.EINTR:
		case unix.EAGAIN:
			return Completion{}, false
		default:
			return c, true
		}
	}
}

// finishRecv ends st's receive and delivers c.
func (b *uringBackend) finishRecv(st *urState, c Completion, fn func(*Completion)) {
	st.rop, st.rcancel = 0, false
	b.setRecvBuf(st, nil)
	b.deliver(c, fn)
}

// readNow tries a copying owner's nil-buffer receive at once, into the
// provider's space, as epoll would: it takes all the data waiting (up to
// the space) in one completion, where a receive from the ring would bring
// at most one ring buffer's worth. With no space it completes with
// NoSpace, as on epoll. It reports whether the receive is done.
func (b *uringBackend) readNow(st *urState) bool {
	if b.prov == nil {
		return false
	}
	buf, id := b.prov.Provide()
	if buf == nil {
		b.ready = append(b.ready, Completion{Tag: st.tag, Op: OpRecv, Err: NoSpace, BufID: -1})
		st.rop = 0
		return true
	}
	n, errno := sock.Read(int(st.fd), buf)
	if errno == unix.EAGAIN || errno == unix.EINTR {
		return false
	}
	if n > 0 {
		b.prov.Commit(id, n)
	} else {
		id = -1
	}
	b.ready = append(b.ready, Completion{Tag: st.tag, Op: OpRecv, N: n, Err: errno, Buf: buf[:n], BufID: id})
	st.rop = 0
	return true
}
