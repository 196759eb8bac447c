package uring

import (
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SQE returns the next free submission queue entry, zeroed, or nil when
// the queue is full: every entry is prepared and not yet consumed by the
// kernel, which takes them at the next Submit or Wait (unless it refuses
// them; see enter). The entry is published to the kernel by the next
// Submit or Wait.
func (r *Ring) SQE() *SQE {
	if r.sqeTail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	r.sqeTail++
	*sqe = SQE{}
	return sqe
}

// Pending returns the number of entries prepared and not yet consumed by
// the kernel, published or not.
func (r *Ring) Pending() uint32 { return r.sqeTail - atomic.LoadUint32(r.sqHead) }

// Unconsumed returns the entries prepared and not yet consumed by the
// kernel, published or not, oldest first, as at most two slices (the
// queue wraps; the SQ array maps ring positions to entries one to one).
// The caller may rewrite them, turn one into a no-op say, until the next
// Submit or Wait: the kernel reads an entry only while it consumes it,
// inside io_uring_enter(2) on the owner's thread. With IORING_SETUP_SQPOLL
// a kernel thread would read published entries at any time and this
// would race; rings here never use it.
func (r *Ring) Unconsumed() (a, b []SQE) {
	head := atomic.LoadUint32(r.sqHead)
	if head == r.sqeTail {
		return nil, nil
	}
	i, j := head&r.sqMask, r.sqeTail&r.sqMask
	if i < j {
		return r.sqes[i:j], nil
	}
	return r.sqes[i:], r.sqes[:j] // i == j: the queue is full
}

// publish makes the prepared entries visible to the kernel: the tail is
// stored after the entries (a release store; the kernel loads it with
// acquire semantics, io_uring(7) "Submission queue polling"). It returns
// the number of entries for the kernel to consume.
func (r *Ring) publish() uint32 {
	if r.sqeHead != r.sqeTail {
		atomic.StoreUint32(r.sqTail, r.sqeTail)
		r.sqeHead = r.sqeTail
	}
	return r.unconsumed()
}

// unconsumed returns the number of published entries the kernel has not
// consumed: the entries to submit. It counts from the kernel's head, as
// liburing's __io_uring_flush_sq does, not from what was published last,
// so entries an earlier io_uring_enter(2) left (refused with EAGAIN or
// EBUSY, or cut short) are submitted by the next one. Asking for fewer
// than the kernel sees would submit only the oldest of them; asking for
// more makes the kernel skip the wait. The kernel moves its head only
// inside io_uring_enter on the owner's thread (no SQPOLL), so the value
// cannot change under us; the load is atomic because the word is shared.
func (r *Ring) unconsumed() uint32 { return r.sqeHead - atomic.LoadUint32(r.sqHead) }

// Submit hands the prepared entries, and any the kernel refused before,
// to the kernel without waiting.
func (r *Ring) Submit() error {
	if r.publish() == 0 && !r.needsEnter() {
		return nil
	}
	return r.enter(0, 0, nil)
}

// needsEnter reports whether completions are held back in the kernel
// until the next io_uring_enter(2): deferred task work (IORING_SQ_TASKRUN)
// or completions that overflowed the queue (IORING_SQ_CQ_OVERFLOW).
func (r *Ring) needsEnter() bool {
	return atomic.LoadUint32(r.sqFlags)&(sqTaskrun|sqCQOverflow) != 0
}

// Settled reports whether the kernel writes no memory of the ring's
// (provided buffers, receive buffers) until its issuer next calls
// io_uring_enter(2): the ring defers completion work to that call
// (SINGLE_ISSUER with DEFER_TASKRUN), no completion waits in the queue,
// and none is held back (deferred work, overflow). So every byte the
// kernel wrote is named by a completion already reaped. Only the issuer
// may rely on it, between its own calls.
func (r *Ring) Settled() bool {
	return r.flags&SetupDeferTaskrun != 0 && r.Ready() == 0 && !r.needsEnter()
}

// Wait submits as Submit does and waits until at least one completion is
// ready or timeout passes (negative: no limit). A zero timeout only
// submits and collects what is ready. A wait that was interrupted, timed
// out, or skipped because the kernel did not take every entry is not an
// error: the caller reaps what is there and waits again.
func (r *Ring) Wait(timeout time.Duration) error {
	n := r.publish()
	if timeout == 0 || r.Ready() > 0 {
		if n == 0 && !r.needsEnter() {
			return nil
		}
		return r.enter(0, enterGetEvents, nil)
	}
	if timeout < 0 {
		return r.enter(1, enterGetEvents, nil)
	}
	r.ts = unix.NsecToTimespec(int64(timeout))
	r.arg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
	return r.enter(1, enterGetEvents|enterExtArg, unsafe.Pointer(&r.arg))
}

// enter submits the unconsumed entries and, with enterGetEvents, waits
// for minComplete completions. Entries the kernel does not take stay
// counted by unconsumed, for the next call: it refuses them all with
// EAGAIN when it cannot allocate requests (and with EBUSY before Linux
// 5.19, while completions overflowed), and takes only some when it runs
// out of memory midway, without waiting then.
func (r *Ring) enter(minComplete, flags uint32, arg unsafe.Pointer) error {
	var argSz uintptr
	if arg != nil {
		argSz = unsafe.Sizeof(r.arg)
	}
	for {
		_, errno := enter(r.enterFD, r.unconsumed(), minComplete, flags|r.enterFlags, arg, argSz)
		switch errno {
		case 0, unix.ETIME, unix.EAGAIN, unix.EBUSY:
			return nil
		case unix.EINTR:
			// A signal (Go's preemption, say) interrupted the call. Only
			// entries left to submit are worth a second call; an
			// interrupted wait just returns.
			if r.unconsumed() == 0 {
				return nil
			}
		default:
			return os.NewSyscallError("io_uring_enter", errno)
		}
	}
}

// Ready returns the number of completions waiting in the queue.
func (r *Ring) Ready() uint32 {
	return atomic.LoadUint32(r.cqTail) - *r.cqHead
}

// Peek returns the completions ready now, oldest first, as at most two
// slices (the queue wraps). They stay valid until Advance.
func (r *Ring) Peek() (a, b []CQE) {
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail) // acquire: entries before tail are written
	if head == tail {
		return nil, nil
	}
	i, j := head&r.cqMask, tail&r.cqMask
	if i < j {
		return r.cqes[i:j], nil
	}
	return r.cqes[i:], r.cqes[:j]
}

// Advance releases the n oldest completions to the kernel.
func (r *Ring) Advance(n uint32) {
	if n > 0 {
		atomic.StoreUint32(r.cqHead, *r.cqHead+n)
	}
}
