package poller

import (
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// Wait blocks in GetQueuedCompletionStatusEx until a packet comes, Wake
// posts one or timeout passes, then delivers the operations that ended:
// those that failed at submission (ready) first, then the port's, in
// order, then the net backend's for the tags it serves. Operations fn
// submits that fail at once are delivered by the next Wait, which then
// does not block.
func (b *iocpBackend) Wait(timeout time.Duration, fn func(*Completion)) error {
	if b.err != nil {
		return b.err
	}
	msec := waitMsec(timeout)
	if len(b.ready) > 0 {
		msec = 0
	}
	n, err := getQueuedEx(b.port, b.evs, msec)
	if err != nil {
		b.err = err
		return err
	}
	ready := b.ready
	b.ready = b.spare[:0]
	for i := range ready {
		b.complete(&ready[i], fn)
	}
	b.spare = ready[:0]
	for i := range b.evs[:n] {
		b.complete(&b.evs[i], fn)
	}
	if b.nb != nil {
		b.nb.Wait(0, fn)
	}
	return nil
}

// waitMsec converts a Wait's timeout to the call's milliseconds, rounded
// up so that a short timeout does not spin.
func waitMsec(d time.Duration) uint32 {
	switch {
	case d < 0:
		return windows.INFINITE
	case d == 0:
		return 0
	case d >= time.Duration(windows.INFINITE-1)*time.Millisecond:
		return windows.INFINITE - 1
	}
	return uint32((d + time.Millisecond - 1) / time.Millisecond)
}

// complete handles one packet: a wake-up, or the end of an operation,
// which it delivers to fn if its tag is still added and drops otherwise
// (fn is nil when Close drains the port).
func (b *iocpBackend) complete(pe *overlappedEntry, fn func(*Completion)) {
	if pe.ov == 0 {
		if pe.key == wakeKey {
			b.woken.Store(false)
		}
		return
	}
	i, side, ok := b.slab.locate(pe.ov)
	if !ok {
		return // no operation of ours
	}
	e, io := &b.ents[i], b.slab.at(i)
	en := syscall.Errno(pe.internal)
	if pe.key != readyKey {
		en = status(&io.ov[side])
	}
	n := int(pe.bytes)
	b.inflight--
	switch {
	case !e.live || fn == nil:
		b.orphanDone(i, side)
	case side == 1 && e.sop != 0:
		b.doneSend(e, n, en, fn)
	case side == 0 && e.rop == OpRecv:
		b.doneRecv(e, n, en, fn)
	case side == 0 && e.rop == OpRecvFrom:
		b.doneRecvFrom(e, n, en, fn)
	case side == 0 && e.rop == OpAccept:
		b.doneAccept(e, en, fn)
	}
}
