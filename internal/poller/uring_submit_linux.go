package poller

import "github.com/galeio/gale/internal/uring"

// Submission. An operation is prepared into the ring's next free entry,
// and the entries go to the kernel with the next Wait, in one
// io_uring_enter(2) with the wait. When the ring has no free entry (more
// operations in one iteration than it holds, or a kernel that refuses
// submissions for a while: EAGAIN when it cannot allocate requests), the
// entry is prepared into the backlog instead, a Go slice. Order matters
// (an async cancel must reach the kernel after the operation it
// cancels), so once a backlog exists every later entry joins it, and the
// backlog moves into the ring, oldest first, at the start of each Wait.
// Preparing an operation therefore never makes a system call and never
// fails.
//
// A failure the backend cannot recover from (the ring cannot be enabled,
// io_uring_enter fails with an errno other than EINTR, EAGAIN, EBUSY or
// ETIME) is kept in err and returned by every Wait from then on: the loop
// above ends and closes the backend. Operations prepared meanwhile are
// accepted and never complete.

// sqe returns a zeroed entry for the operation data: the ring's next free
// one, or a new one at the end of the backlog. The pointer is valid until
// the next call of sqe.
func (b *uringBackend) sqe(data ud) *uring.SQE {
	if !b.bound {
		b.bind()
	}
	var e *uring.SQE
	if len(b.backlog) == 0 {
		e = b.r.SQE()
	}
	if e == nil {
		b.backlog = append(b.backlog, uring.SQE{})
		e = &b.backlog[len(b.backlog)-1]
	}
	e.UserData = uint64(data)
	b.inflight++
	return e
}

// flush moves the backlog into the ring, submitting whenever the ring
// fills, until the backlog is empty (the rest is submitted by the wait
// that follows), the kernel takes no entry (refused: the next Wait tries
// again) or the submission fails.
func (b *uringBackend) flush() {
	for len(b.backlog) > 0 {
		b.refill()
		if len(b.backlog) == 0 {
			return
		}
		queued := b.r.Pending()
		if err := b.r.Submit(); err != nil {
			b.fail(err)
			return
		}
		if b.r.Pending() == queued {
			return
		}
	}
}

// refill moves the oldest entries of the backlog into the ring's free
// entries.
func (b *uringBackend) refill() {
	n := 0
	for ; n < len(b.backlog); n++ {
		e := b.r.SQE()
		if e == nil {
			break
		}
		*e = b.backlog[n]
	}
	b.backlog = b.backlog[:copy(b.backlog, b.backlog[n:])]
}

// fail records the failure that ends the backend; the first one stays.
func (b *uringBackend) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}
