package uring

import (
	"os"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// SQE returns the next free submission queue entry, zeroed, or nil when
// the queue is full: Submit, then ask again. The entry is published to
// the kernel by the next Submit or Wait.
func (r *Ring) SQE() *SQE {
	if r.sqeTail-atomic.LoadUint32(r.sqHead) >= r.sqEntries {
		return nil
	}
	sqe := &r.sqes[r.sqeTail&r.sqMask]
	r.sqeTail++
	*sqe = SQE{}
	return sqe
}

// Pending returns the number of entries prepared but not yet submitted.
func (r *Ring) Pending() uint32 { return r.sqeTail - r.sqeHead }

// publish makes the prepared entries visible to the kernel: the tail is
// stored after the entries (a release store; the kernel loads it with
// acquire semantics, io_uring(7) "Submission queue polling").
func (r *Ring) publish() uint32 {
	n := r.sqeTail - r.sqeHead
	if n > 0 {
		atomic.StoreUint32(r.sqTail, r.sqeTail)
		r.sqeHead = r.sqeTail
	}
	return n
}

// Submit hands the prepared entries to the kernel without waiting.
func (r *Ring) Submit() error {
	n := r.publish()
	if n == 0 && !r.needsEnter() {
		return nil
	}
	return r.enter(n, 0, 0, nil)
}

// needsEnter reports whether completions are held back in the kernel
// until the next io_uring_enter(2): deferred task work (IORING_SQ_TASKRUN)
// or completions that overflowed the queue (IORING_SQ_CQ_OVERFLOW).
func (r *Ring) needsEnter() bool {
	return atomic.LoadUint32(r.sqFlags)&(sqTaskrun|sqCQOverflow) != 0
}

// Wait submits the prepared entries and waits until at least one
// completion is ready or timeout passes (negative: no limit). A zero
// timeout only submits and collects what is ready. An interrupted or
// timed-out wait is not an error.
func (r *Ring) Wait(timeout time.Duration) error {
	n := r.publish()
	if timeout == 0 {
		if n == 0 && !r.needsEnter() {
			return nil
		}
		return r.enter(n, 0, enterGetEvents, nil)
	}
	if r.Ready() > 0 {
		if n == 0 && !r.needsEnter() {
			return nil
		}
		return r.enter(n, 0, enterGetEvents, nil)
	}
	if timeout < 0 {
		return r.enter(n, 1, enterGetEvents, nil)
	}
	r.ts = unix.NsecToTimespec(int64(timeout))
	r.arg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
	return r.enter(n, 1, enterGetEvents|enterExtArg, unsafe.Pointer(&r.arg))
}

func (r *Ring) enter(toSubmit, minComplete, flags uint32, arg unsafe.Pointer) error {
	var argSz uintptr
	if arg != nil {
		argSz = unsafe.Sizeof(r.arg)
	}
	for {
		n, errno := enter(r.enterFD, toSubmit, minComplete, flags|r.enterFlags, arg, argSz)
		switch errno {
		case 0:
			toSubmit -= min(uint32(n), toSubmit)
			if toSubmit == 0 {
				return nil
			}
			// SUBMIT_ALL submits every entry unless the kernel is short
			// of memory; retry the rest without waiting.
			minComplete, flags = 0, flags&^enterExtArg
			arg, argSz = nil, 0
		case unix.EINTR, unix.ETIME:
			if toSubmit == 0 || errno == unix.ETIME {
				return nil
			}
		case unix.EBUSY, unix.EAGAIN:
			// Before Linux 5.19 a full completion queue refused new
			// submissions: reap, then retry.
			return nil
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
