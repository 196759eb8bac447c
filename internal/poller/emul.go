//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package poller

import (
	"syscall"
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
	readable bool // data, end of file, or an error is pending
	writable bool // send space, or an error is pending
}

// emul implements Backend over a readiness notifier: an operation is tried at
// once with a non-blocking system call, parked on EAGAIN, and retried on the
// descriptor's next edge.
type emul struct {
	rd   readiness
	prov Provider
	fds  []fdState // indexed by tag slot
	// ready holds completions produced outside event handling (immediate
	// results, cancellations); spare is its double buffer.
	ready, spare []Completion
	evs          []event
}

// fdState is what emul knows of one tag.
//
// Invariant: drained is set only when a read proved the receive queue empty
// (EAGAIN, or a short read on a stream) and cleared by the next readable
// edge; while it is set a new Recv waits for the edge instead of issuing a
// read that would fail. full is the same for the send side. Edge-triggered
// epoll and EV_CLEAR kqueue report every arrival after the last report, so
// no data can arrive unnoticed while a flag is set.
type fdState struct {
	fd      int
	tag     Tag
	live    bool
	stream  bool
	drained bool
	full    bool

	recvOn  bool
	recvBuf []byte // nil: use the Provider

	sendOn   bool
	sendBufs [][]byte
	sent     int // bytes of sendBufs already written
	iov      []unix.Iovec
}

func newEmul(rd readiness, p Provider) *emul {
	return &emul{rd: rd, prov: p, evs: make([]event, 0, 128)}
}

func (e *emul) state(tag Tag) *fdState {
	i := int(tag.Slot())
	if i >= len(e.fds) {
		return nil
	}
	st := &e.fds[i]
	if !st.live || st.tag != tag {
		return nil
	}
	return st
}

func (e *emul) Add(fd int, tag Tag, stream bool) error {
	i := int(tag.Slot())
	for i >= len(e.fds) {
		e.fds = append(e.fds, fdState{})
	}
	st := &e.fds[i]
	iov := st.iov[:0]
	*st = fdState{fd: fd, tag: tag, live: true, stream: stream, iov: iov}
	if err := e.rd.add(fd, tag); err != nil {
		st.live = false
		return err
	}
	return nil
}

func (e *emul) Remove(tag Tag) error {
	st := e.state(tag)
	if st == nil {
		return nil
	}
	st.live = false
	st.recvBuf, st.sendBufs = nil, nil
	clear(st.iov[:cap(st.iov)])
	return e.rd.del(st.fd)
}

func (e *emul) Recv(tag Tag, buf []byte) {
	st := e.state(tag)
	if st == nil || st.recvOn {
		panic("poller: Recv on an unknown tag or with a receive in flight")
	}
	st.recvOn, st.recvBuf = true, buf
	if !st.drained {
		if c, done := e.tryRecv(st); done {
			e.ready = append(e.ready, c)
		}
	}
}

func (e *emul) Send(tag Tag, bufs [][]byte) {
	st := e.state(tag)
	if st == nil || st.sendOn {
		panic("poller: Send on an unknown tag or with a send in flight")
	}
	st.sendOn, st.sendBufs, st.sent = true, bufs, 0
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
	case op == OpRecv && st.recvOn:
		st.recvOn, st.recvBuf = false, nil
		e.ready = append(e.ready, Completion{Tag: tag, Op: OpRecv, Err: unix.ECANCELED, BufID: -1})
	case op == OpSend && st.sendOn:
		n := st.sent
		st.sendOn, st.sendBufs = false, nil
		e.ready = append(e.ready, Completion{Tag: tag, Op: OpSend, N: n, Err: unix.ECANCELED, BufID: -1})
	}
}

// tryRecv performs one read for st's receive and reports its completion;
// done is false when the read found nothing and the receive stays parked.
func (e *emul) tryRecv(st *fdState) (c Completion, done bool) {
	buf, id := st.recvBuf, -1
	if buf == nil {
		buf, id = e.prov.Provide()
		if buf == nil {
			st.recvOn = false
			return Completion{Tag: st.tag, Op: OpRecv, Err: unix.ENOBUFS, BufID: -1}, true
		}
	}
	n, errno := sock.Read(st.fd, buf)
	if errno == unix.EAGAIN {
		st.drained = true
		return c, false
	}
	// A short read on a stream emptied the receive queue; a zero-byte read
	// (end of file) or an error will repeat at once, so it is not "drained".
	st.drained = errno == 0 && st.stream && n > 0 && n < len(buf)
	if id >= 0 && n > 0 {
		e.prov.Commit(id, n)
	}
	st.recvOn, st.recvBuf = false, nil
	return Completion{Tag: st.tag, Op: OpRecv, N: n, Err: errno, Buf: buf[:n], BufID: id}, true
}

// trySend writes as much of st's send as the socket takes and reports the
// completion once everything is written or on an error; done is false while
// the send stays parked.
func (e *emul) trySend(st *fdState) (c Completion, done bool) {
	for {
		n, errno := e.write(st)
		if errno == unix.EAGAIN {
			st.full = true
			return c, false
		}
		st.sent += n
		if errno != 0 || st.sent == sendLen(st.sendBufs) {
			c = Completion{Tag: st.tag, Op: OpSend, N: st.sent, Err: errno, BufID: -1}
			st.sendOn, st.sendBufs = false, nil
			return c, true
		}
		if st.stream {
			// A short write filled the send buffer; wait for the edge.
			st.full = true
			return c, false
		}
	}
}

// write issues one write or writev for the unsent part of st's send.
func (e *emul) write(st *fdState) (int, syscall.Errno) {
	skip := st.sent
	if len(st.sendBufs) == 1 {
		return sock.Write(st.fd, st.sendBufs[0][skip:])
	}
	st.iov = st.iov[:0]
	for _, b := range st.sendBufs {
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		b = b[skip:]
		skip = 0
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		st.iov = append(st.iov, v)
	}
	return sock.Writev(st.fd, st.iov)
}

func sendLen(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

func (e *emul) Wait(timeout time.Duration, fn func(*Completion)) error {
	msec := -1
	if len(e.ready) > 0 {
		msec = 0
	} else if timeout >= 0 {
		msec = int((timeout + time.Millisecond - 1) / time.Millisecond)
	}
	evs, err := e.rd.wait(msec, e.evs[:0])
	e.evs = evs[:0]
	if err != nil {
		return err
	}
	e.deliverReady(fn)
	for _, ev := range evs {
		e.handle(ev, fn)
	}
	// Callbacks may have submitted operations that completed at once.
	e.deliverReady(fn)
	return nil
}

// deliverReady hands out the queued completions. Callbacks may queue more;
// those are delivered too before it returns.
func (e *emul) deliverReady(fn func(*Completion)) {
	for len(e.ready) > 0 {
		batch := e.ready
		e.ready = e.spare[:0]
		for i := range batch {
			fn(&batch[i])
			batch[i] = Completion{}
		}
		e.spare = batch[:0]
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
	if ev.readable {
		st.drained = false
		if st.recvOn {
			if c, done := e.tryRecv(st); done {
				fn(&c)
			}
		}
	}
	// fn may have removed or reused the slot.
	if st = e.state(ev.tag); st != nil && ev.writable {
		st.full = false
		if st.sendOn {
			if c, done := e.trySend(st); done {
				fn(&c)
			}
		}
	}
}

func (e *emul) Wake() error  { return e.rd.wake() }
func (e *emul) Close() error { return e.rd.close() }
