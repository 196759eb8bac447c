package poller

import (
	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/uring"
)

// Remove stops tracking tag and ends what it has with the kernel, without
// a system call (the next Wait submits what it prepares):
//
//   - An entry of tag that the kernel has not consumed yet (in the ring,
//     published or not, or in the backlog) becomes a no-op with the same
//     user_data (unqueue): the operation never starts, and the no-op's
//     completion is its last. No entry left to submit names the
//     descriptor, which the caller closes next and the next socket may
//     take, and a queued send never reaches the connection its owner
//     gave up (whose buffers the owner may already reuse).
//   - An operation the kernel runs already holds the file it was given;
//     it is cancelled. Its Go buffers stay referenced, as an orphan,
//     until its last completion, and a zero-copy send resets the
//     connection so that the kernel lets go of its pages (zcReset).
//
// Descriptors accepted for tag and not yet taken are closed.
func (b *uringBackend) Remove(tag Tag) error {
	st := b.state(tag)
	if st == nil {
		return nil
	}
	var recvQueued, sendQueued bool
	if st.rk != 0 || st.sk != 0 {
		recvQueued, sendQueued = b.unqueue(tag)
	}
	if st.rk != 0 && !recvQueued {
		b.dropRecv(st)
	}
	if st.sk != 0 && !sendQueued {
		b.dropSend(st)
	}
	st.tag, st.rk, st.sk = 0, 0, 0 // not live (dropRecv and dropSend name the operations by tag)
	if r := b.rec(st); r != nil {
		for _, fd := range r.accepted {
			sock.Close(fd)
		}
		// No spill is kept: a burst may have grown it to megabytes.
		r.accepted, r.spill, r.spillOff, r.rend = r.accepted[:0], nil, 0, 0
		r.rbuf, r.sbufs, r.zres = nil, nil, 0
		b.releaseIO(st)
	}
	return nil
}

// unqueue turns every entry of tag that the kernel has not consumed into
// a no-op with the same user_data, and reports which sides had one. A
// side has at most one: its next kernel operation starts only after the
// last completion of the previous, which the kernel gives only once it
// consumed the entry. Rewriting entries the kernel has not consumed is
// safe because it reads them only inside io_uring_enter(2), on this
// thread (no SQPOLL; see uring.Ring.Unconsumed). Async cancels name
// their target by user_data, under the wake-up's slot, so they stay.
func (b *uringBackend) unqueue(tag Tag) (recv, send bool) {
	head, tail := b.r.Unconsumed()
	for _, q := range [...][]uring.SQE{head, tail, b.backlog} {
		for i := range q {
			data := ud(q[i].UserData)
			if !data.matches(tag) {
				continue
			}
			q[i] = uring.SQE{Opcode: uring.OpNop, UserData: uint64(data)}
			b.keep(data, nopped)
			if data.recvSide() {
				recv = true
			} else {
				send = true
			}
		}
	}
	return recv, send
}

// nopped is the orphan record of an operation unqueue turned into a
// no-op: the kernel never saw its buffers, and its one completion, the
// no-op's (result 0), carries nothing: no data, no provided buffer, and
// for an accept no descriptor to close (0 is not the accepted socket).
var nopped = new(orphan)

// dropRecv cancels st's receive-side kernel operation. A receive into
// the owner's buffer is kept as an orphan until its last completion; the
// others use no Go memory (the buffer ring's, or none).
func (b *uringBackend) dropRecv(st *urState) {
	data := makeUD(st.tag, st.rk)
	if st.rk == kRecv {
		b.keep(data, &orphan{buf: b.recvBuf(st)})
	}
	b.cancel(data)
}

// dropSend cancels st's send, kept as an orphan until its last
// completion.
func (b *uringBackend) dropSend(st *urState) {
	if st.bits.has(stZC) {
		b.zcReset(st)
	}
	data := makeUD(st.tag, st.sk)
	r := b.rec(st)
	b.keep(data, &orphan{bufs: r.sbufs, msg: r.msg})
	r.msg = nil // the orphan's until the last completion
	b.cancel(data)
}

// keep records o as the operation data's orphan until its last
// completion.
func (b *uringBackend) keep(data ud, o *orphan) {
	if b.orphans == nil {
		b.orphans = make(map[uint64]*orphan)
	}
	b.orphans[uint64(data)] = o
}

// orphaned disposes of a completion whose owner is gone: a provided
// buffer goes back to the ring, an accepted descriptor is closed, and an
// orphan's buffers are released with its last completion.
func (b *uringBackend) orphaned(data ud, c uring.CQE) {
	if c.Flags&uring.CQEFBuffer != 0 {
		b.consumed(c)
	}
	if data.kind() == kAccept && c.Res >= 0 && b.orphans[uint64(data)] != nopped {
		sock.Close(int(c.Res))
	}
	if c.Flags&uring.CQEFMore == 0 {
		delete(b.orphans, uint64(data))
	}
}
