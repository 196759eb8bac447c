package poller

import (
	"syscall"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
)

// Submission. An operation is one overlapped call on the tag's entry; a
// call that fails at once has no packet coming, so its error goes to
// ready and the next Wait delivers it as a packet's.

// submitted returns tag's entry, nil if the net backend serves tag, or
// panics on a misuse of the contract (as every backend does): an
// unknown tag, or a side already busy.
func (b *iocpBackend) submitted(tag Tag, recv bool) *iocpEnt {
	sl := b.slot(tag)
	if sl == nil {
		panic("poller: operation on an unknown tag")
	}
	if sl.ent < 0 {
		return nil
	}
	e := &b.ents[sl.ent]
	switch {
	case recv && e.rop != 0:
		panic("poller: a receive-side operation is already in flight")
	case !recv && e.sop != 0:
		panic("poller: a send-side operation is already in flight")
	}
	return e
}

// index returns e's entry number.
func (b *iocpBackend) index(e *iocpEnt) int32 {
	return int32((uintptr(unsafe.Pointer(e)) - uintptr(unsafe.Pointer(&b.ents[0]))) / unsafe.Sizeof(iocpEnt{}))
}

func (b *iocpBackend) Recv(tag Tag, buf []byte) {
	e := b.submitted(tag, true)
	if e == nil {
		b.nb.Recv(tag, buf)
		return
	}
	e.rop, e.rbuf = OpRecv, buf
	b.recv(e)
}

// recv starts e's receive: a zero-byte one when it is into the
// Provider's space.
func (b *iocpBackend) recv(e *iocpEnt) {
	i := b.index(e)
	io := b.slab.at(i)
	io.ov[0], io.flags = ovZero, 0
	io.rbuf = wsaBuf(e.rbuf)
	b.started(i, 0, sock.WSARecv(e.fd, addr(&io.rbuf), 1, addr(&io.flags), addr(&io.ov[0])))
}

func (b *iocpBackend) RecvFrom(tag Tag, buf []byte) {
	e := b.submitted(tag, true)
	if e == nil {
		b.nb.RecvFrom(tag, buf)
		return
	}
	e.rop, e.rbuf = OpRecvFrom, buf
	i := b.index(e)
	io := b.slab.at(i)
	io.ov[0], io.flags, io.fromLen = ovZero, 0, int32(len(io.from))
	io.rbuf = wsaBuf(buf)
	b.started(i, 0, sock.WSARecvFrom(e.fd, addr(&io.rbuf), 1, addr(&io.flags), addr(&io.from[0]), addr(&io.fromLen), addr(&io.ov[0])))
}

func (b *iocpBackend) Accept(tag Tag) {
	e := b.submitted(tag, true)
	if e == nil {
		b.nb.Accept(tag)
		return
	}
	e.rop = OpAccept
	i := b.index(e)
	as, en := sock.NewSocket(e.fd)
	if en == 0 {
		e.acc = as
		io := b.slab.at(i)
		io.ov[0] = ovZero
		en = sock.AcceptEx(e.fd, as, addr(&io.addrs[0]), addr(&io.recvd), addr(&io.ov[0]))
	}
	b.started(i, 0, en)
}

func (b *iocpBackend) Send(tag Tag, bufs [][]byte) {
	e := b.submitted(tag, false)
	if e == nil {
		b.nb.Send(tag, bufs)
		return
	}
	e.sop, e.sdone, e.stotal = OpSend, 0, 0
	for _, p := range bufs {
		e.stotal += len(p)
	}
	if !e.stream && len(bufs) > iocpMaxBufs {
		bufs = [][]byte{joinBufs(bufs)} // one datagram needs one call
	}
	e.sbufs = bufs
	if e.stotal == 0 {
		b.finishNow(b.index(e), 1, 0) // nothing to send
		return
	}
	b.send(e)
}

// send starts a WSASend of what is left of e's buffers, up to
// iocpMaxBufs of them.
func (b *iocpBackend) send(e *iocpEnt) {
	i := b.index(e)
	io := b.slab.at(i)
	io.ov[1] = ovZero
	n, skip := 0, e.sdone
	for _, p := range e.sbufs {
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		io.sbufs[n] = wsaBuf(p[skip:])
		skip = 0
		if n++; n == iocpMaxBufs {
			break
		}
	}
	b.started(i, 1, sock.WSASend(e.fd, addr(&io.sbufs[0]), n, addr(&io.ov[1])))
}

// started counts an operation of entry i's side as in flight: its packet
// comes, or, when the call failed with en, a ready entry stands for it.
func (b *iocpBackend) started(i int32, side int, en syscall.Errno) {
	if en != 0 {
		b.finishNow(i, side, en)
		return
	}
	b.inflight++
}

// finishNow ends entry i's side at submission, with en (0: it had
// nothing to do): a ready entry, which Wait takes as the port's packet.
func (b *iocpBackend) finishNow(i int32, side int, en syscall.Errno) {
	b.inflight++
	io := b.slab.at(i)
	b.ready = append(b.ready, overlappedEntry{key: readyKey, ov: addr(&io.ov[side]), internal: uintptr(en)})
}

// readyKey marks a ready entry: its internal is an errno, not an
// NTSTATUS.
const readyKey = 3

// Cancel asks the kernel to end op's side: CancelIoEx. Its packet comes
// as for any completion: with ERROR_OPERATION_ABORTED and the bytes
// moved, or a success if the operation finished first. The last attempt
// the contract asks for is made at delivery (doneRecv, doneSend).
func (b *iocpBackend) Cancel(tag Tag, op Op) {
	sl := b.slot(tag)
	if sl == nil {
		return
	}
	if sl.ent < 0 {
		b.nb.Cancel(tag, op)
		return
	}
	e := &b.ents[sl.ent]
	io := b.slab.at(sl.ent)
	switch {
	case op.recvSide() && e.rop == op && !e.rCancel:
		e.rCancel = true
		sock.CancelIoEx(e.fd, addr(&io.ov[0]))
	case op == OpSend && e.sop == op && !e.sCancel:
		e.sCancel = true
		sock.CancelIoEx(e.fd, addr(&io.ov[1]))
	}
}

// wsaBuf describes p, which its entry keeps referenced while the kernel
// may use it.
func wsaBuf(p []byte) sock.WSABuf {
	if len(p) == 0 {
		return sock.WSABuf{}
	}
	return sock.WSABuf{Len: uint32(len(p)), Buf: uintptr(unsafe.Pointer(&p[0]))}
}
