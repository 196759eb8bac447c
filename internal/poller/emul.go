//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package poller

import (
	"time"

	"github.com/galeio/gale/internal/sock"

	"golang.org/x/sys/unix"
)

// readiness is the part of a readiness backend that differs per OS: epoll on
// Linux, kqueue on the BSDs. Descriptors are registered edge-triggered for
// both directions once, so no re-arming system call is ever needed.
type readiness interface {
	add(fd int, tag Tag) error
	del(fd int) error
	// wait appends the ready events to evs and returns it. A wake-up or
	// EINTR returns no event and no error.
	wait(msec int, evs []event) ([]event, error)
	wake() error
	close() error
}

// event is one readiness report.
type event struct {
	tag      Tag
	readable bool // data, a connection, end of file, or an error is pending
	writable bool // send space, a finished connect, or an error is pending
	hangup   bool // end of file or an error is pending (EPOLLRDHUP, EV_EOF)
}

// emul implements Backend over a readiness notifier: an operation is tried at
// once with a non-blocking system call, parked on EAGAIN, and retried on the
// descriptor's next edge.
type emul struct {
	rd   readiness
	prov Provider
	kind Kind
	fds  fdTable      // indexed by tag slot
	ios  ioTable      // the buffers of operations in flight (see fdState)
	iov  []unix.Iovec // write's scratch: used and cleared within one call
	// rsa receives the peer's address of each accept (sock.AcceptPeer),
	// so that an inet peer costs no allocation; decoded within the call.
	rsa unix.RawSockaddrAny
	// completions: later holds nil-buffer receives, tried at delivery
	// (serveLater).
	completions
	evs []event
	// skipped counts Waits in a row that delivered queued completions
	// without polling.
	skipped int
}

// fdState is what emul knows of one tag: the operation in flight on each
// side, if any.
//
// Invariant: drained is set only when a receive proved the queue empty
// (EAGAIN, or a short read on a stream that has not hung up) and cleared
// by the next readable edge; while it is set a new receive waits for the
// edge instead of making a system call that would fail. full is the same
// for the send side. Edge-triggered epoll and EV_CLEAR kqueue report every
// arrival after the last report, so nothing can arrive unnoticed while a
// flag is set. A short read proves only that no data is left: an end of
// file or error that arrived with the data shares its edge, so once the
// peer hung up (hup) the inference is off and reads are always tried.
//
// The buffers of the operations in flight are in an fdIO (emul_fdio.go),
// taken only while an operation holds a buffer (a send, or a receive into
// a given buffer): an idle connection's receive into the Provider's
// buffer needs none, so its state is 24 bytes.
type fdState struct {
	tag Tag
	fd  int32
	io  ioRef // none while no operation in flight holds a buffer
	rop Op    // receive side in flight: OpRecv, OpRecvFrom, OpAccept, or 0
	sop Op    // send side in flight: OpSend, or 0
	// queued: the tag is in later, whose drain serves its nil-buffer
	// receive; it is queued once however often that receive is served
	// and submitted again before the drain reaches it.
	queued  bool
	stream  bool
	drained bool
	full    bool
	hup     bool
	cancel  bool // the receive is cancelled once its deferred attempt is made
}

// pagedTable holds per-slot states in fixed pages, so a table of many
// descriptors grows without copying and wastes at most one page.
type pagedTable[T any] struct{ pages [][]T }

// fdTable is emul's table.
type fdTable = pagedTable[fdState]

const fdPage = 256

// at returns slot i's state, or nil beyond the table.
func (t *pagedTable[T]) at(i int) *T {
	if p := i / fdPage; p < len(t.pages) {
		return &t.pages[p][i%fdPage]
	}
	return nil
}

// grow returns slot i's state, adding pages as needed.
func (t *pagedTable[T]) grow(i int) *T {
	for i/fdPage >= len(t.pages) {
		t.pages = append(t.pages, make([]T, fdPage))
	}
	return t.at(i)
}

func newEmul(rd readiness, p Provider, k Kind) *emul {
	return &emul{rd: rd, prov: p, kind: k, evs: make([]event, 0, 128)}
}

func (e *emul) Kind() Kind { return e.kind }

func (e *emul) Traits() Traits { return 0 }

func (e *emul) state(tag Tag) *fdState {
	st := e.fds.at(int(tag.Slot()))
	if st == nil {
		return nil
	}
	if st.tag != tag { // 0 when not live: no tag is 0
		return nil
	}
	return st
}

func (e *emul) Add(fd int, tag Tag, stream bool) error {
	st := e.fds.grow(int(tag.Slot()))
	*st = fdState{fd: int32(fd), tag: tag, stream: stream}
	if err := e.rd.add(fd, tag); err != nil {
		st.tag = 0
		return err
	}
	return nil
}

func (e *emul) Remove(tag Tag) error {
	st := e.state(tag)
	if st == nil {
		return nil
	}
	st.tag = 0
	if io := e.ios.of(st); io != nil {
		*io = fdIO{}
		e.releaseIO(st)
	}
	return e.rd.del(int(st.fd))
}

// submit records op on its side of tag and tries it at once unless the
// side is known not to be ready.
func (e *emul) submit(tag Tag, op Op) *fdState {
	st := e.state(tag)
	if st == nil {
		panic("poller: operation on an unknown tag")
	}
	if op.recvSide() {
		if st.rop != 0 {
			panic("poller: a receive-side operation is already in flight")
		}
		st.rop = op
	} else {
		if st.sop != 0 {
			panic("poller: a send-side operation is already in flight")
		}
		st.sop = op
	}
	return st
}

func (e *emul) Recv(tag Tag, buf []byte) {
	st := e.submit(tag, OpRecv)
	e.setRecvBuf(st, buf)
	e.kickRecv(st)
}

func (e *emul) RecvFrom(tag Tag, buf []byte) {
	st := e.submit(tag, OpRecvFrom)
	e.setRecvBuf(st, buf)
	e.kickRecv(st)
}

func (e *emul) Accept(tag Tag) {
	e.kickRecv(e.submit(tag, OpAccept))
}

func (e *emul) Send(tag Tag, bufs [][]byte) {
	st := e.submit(tag, OpSend)
	io := e.ioOf(st)
	io.sendBufs, io.sent = bufs, 0
	e.kickSend(st)
}

func (e *emul) kickRecv(st *fdState) {
	if st.rop == OpRecv && e.recvBuf(st) == nil {
		e.serveAtDelivery(st)
		return
	}
	if !st.drained {
		if c, done := e.tryRecv(st); done {
			e.ready = append(e.ready, c)
		}
	}
}

func (e *emul) kickSend(st *fdState) {
	if !st.full {
		if c, done := e.trySend(st); done {
			e.ready = append(e.ready, c)
		}
	}
}

func (e *emul) Cancel(tag Tag, op Op) {
	st := e.state(tag)
	if st == nil {
		return
	}
	switch {
	case op == OpRecv && st.rop == op && e.recvBuf(st) == nil:
		// A provided buffer is only taken at delivery: attempt there.
		st.cancel = true
		e.serveAtDelivery(st)
	case op.recvSide() && st.rop == op:
		c, done := e.tryRecv(st)
		if !done {
			c = e.cancelRecv(st)
		}
		e.ready = append(e.ready, c)
	case !op.recvSide() && st.sop == op:
		c, done := e.trySend(st)
		if !done {
			c = Completion{Tag: tag, Op: op, N: e.ios.of(st).sent, Err: unix.ECANCELED, BufID: -1}
			st.sop = 0
			e.endSend(st)
		}
		e.ready = append(e.ready, c)
	}
}

func (e *emul) cancelRecv(st *fdState) Completion {
	c := Completion{Tag: st.tag, Op: st.rop, Err: unix.ECANCELED, BufID: -1}
	st.rop, st.cancel = 0, false
	e.endRecv(st)
	return c
}

// maxSkips bounds how many Waits in a row deliver queued completions
// without polling: enough to spare the poll system call of a
// request-response exchange, few enough that other descriptors' events
// wait at most that many iterations.
const maxSkips = 4

func (e *emul) Wait(timeout time.Duration, fn func(*Completion)) error {
	msec := -1
	if e.pending() {
		if e.skipped < maxSkips {
			e.skipped++
			e.drain(fn, e.serveLater)
			return nil
		}
		msec = 0
	} else if timeout >= 0 {
		msec = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	e.skipped = 0
	evs, err := e.rd.wait(msec, e.evs[:0])
	e.evs = evs[:0]
	if err != nil {
		return err
	}
	e.drain(fn, e.serveLater)
	for _, ev := range evs {
		e.handle(ev, fn)
	}
	// Callbacks may have submitted operations that completed at once.
	e.drain(fn, e.serveLater)
	return nil
}

// serveAtDelivery queues st's tag in later, unless it is there already.
func (e *emul) serveAtDelivery(st *fdState) {
	if !st.queued {
		st.queued = true
		e.later = append(e.later, st.tag)
	}
}

// serveLater tries tag's deferred nil-buffer receive, and ends it if it
// was cancelled and found nothing.
func (e *emul) serveLater(tag Tag, fn func(*Completion)) {
	st := e.state(tag)
	if st == nil {
		return
	}
	st.queued = false
	if st.rop != OpRecv || (st.drained && !st.cancel) {
		return
	}
	if c, done := e.tryRecv(st); done {
		st.cancel = false
		e.deliver(c, fn)
	} else if st.cancel {
		e.deliver(e.cancelRecv(st), fn)
	}
}

// handle runs the parked operations of one event and delivers their
// completions directly, so each receive's buffer is consumed before the
// next one is provided.
func (e *emul) handle(ev event, fn func(*Completion)) {
	st := e.state(ev.tag)
	if st == nil {
		return // stale: the slot was released or reused
	}
	if ev.hangup {
		st.hup = true
	}
	if ev.readable {
		st.drained = false
		if st.rop != 0 {
			if c, done := e.tryRecv(st); done {
				e.deliver(c, fn)
			}
		}
	}
	// fn may have removed or reused the slot, or grown the table.
	if st = e.state(ev.tag); st != nil && ev.writable {
		st.full = false
		if st.sop != 0 {
			if c, done := e.trySend(st); done {
				e.deliver(c, fn)
			}
		}
	}
}

func (e *emul) Wake() error { return e.rd.wake() }
func (e *emul) Close() error {
	for _, c := range e.ready {
		if c.Op == OpAccept && c.Err == 0 {
			sock.Close(c.N) // accepted, never delivered: nobody owns it
		}
	}
	e.ready = nil
	return e.rd.close()
}
