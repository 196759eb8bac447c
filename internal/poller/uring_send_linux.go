package poller

import (
	"syscall"
	"unsafe"

	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

func (b *uringBackend) Send(tag Tag, bufs [][]byte) {
	st := b.submitSend(tag, OpSend)
	total := sendLen(bufs)
	if total == 0 {
		b.ready = append(b.ready, Completion{Tag: tag, Op: OpSend, BufID: -1})
		st.sop = 0
		return
	}
	r := b.io(st)
	r.sbufs, r.sent, r.total = bufs, 0, total
	b.armSend(st)
}

// sendFlags: no SIGPIPE, and on a stream the kernel itself retries until
// every byte is queued (io_uring's net.c retries MSG_WAITALL sends).
func sendFlags(stream bool) uint32 {
	if stream {
		return unix.MSG_NOSIGNAL | unix.MSG_WAITALL
	}
	return unix.MSG_NOSIGNAL
}

// armSend submits the unsent part of st's send: IORING_OP_SEND for one
// buffer, IORING_OP_SENDMSG with a vector for several.
func (b *uringBackend) armSend(st *urState) {
	r := b.rec(st)
	skip, first := r.sent, 0
	for skip >= len(r.sbufs[first]) {
		skip -= len(r.sbufs[first])
		first++
	}
	e := b.sqe(makeUD(st.tag, kSend))
	e.FD, e.OpFlags = st.fd, sendFlags(st.bits.has(stStream))
	st.sk = kSend
	if first == len(r.sbufs)-1 {
		rest := r.sbufs[first][skip:]
		e.Opcode, e.Addr, e.Len = uring.OpSend, addrOf(rest), uint32(min(len(rest), 1<<30))
	} else {
		if r.msg == nil {
			r.msg = new(urMsg)
		}
		m := r.msg
		m.iov, _ = appendIovecs(m.iov[:0], r.sbufs, r.sent)
		m.hdr = unix.Msghdr{Iov: &m.iov[0]}
		m.hdr.SetIovlen(len(m.iov))
		e.Opcode, e.Addr = uring.OpSendmsg, uint64(uintptr(unsafe.Pointer(&m.hdr)))
	}
	st.bits.set(stZC, b.zeroCopy(st))
	if st.bits.has(stZC) {
		prepZeroCopy(e)
	}
	if sock.Faulty() {
		b.injectFault(e, sock.FaultWrite, int(st.fd))
	}
}

// sendDone handles a completion of st's send-side kernel operation.
func (b *uringBackend) sendDone(st *urState, c uring.CQE, fn func(*Completion)) {
	zc := st.bits.has(stZC)
	if zc {
		if !b.zcHold(st, &c) {
			return // the pages are still the kernel's
		}
		st.bits.set(stZC, false)
	}
	st.sk = 0
	st.bits.set(stSStop, false)
	r := b.rec(st)
	var errno syscall.Errno
	if c.Res > 0 {
		r.sent += int(c.Res)
	} else if c.Res < 0 {
		errno = unix.Errno(-c.Res)
	}
	switch {
	case r.sent == r.total:
		b.finishSend(st, Completion{Tag: st.tag, Op: OpSend, N: r.sent, BufID: -1}, fn)
	case st.bits.has(stSCancel):
		b.finishSend(st, b.lastSend(st), fn)
	case zc && errno == unix.EOPNOTSUPP:
		st.bits.set(stZCNo, true) // a socket without zero-copy sends: copy
		b.armSend(st)
	case errno == 0 || errno == unix.EAGAIN || errno == unix.EINTR:
		// A short send: the rest. ECANCELED that no one asked for comes
		// from the exit of the thread that submitted the send (an unbound
		// ring's goroutine moves between threads): go on from here.
		b.armSend(st)
	default:
		b.finishSend(st, Completion{Tag: st.tag, Op: OpSend, N: r.sent, Err: errno, BufID: -1}, fn)
	}
}

// lastSend makes the last non-blocking attempt of a cancelled send: space
// already there still counts.
func (b *uringBackend) lastSend(st *urState) Completion {
	r := b.rec(st)
	for r.sent < r.total {
		n, errno := b.writeRest(st)
		if errno != 0 || n == 0 {
			break
		}
		r.sent += n
	}
	c := Completion{Tag: st.tag, Op: OpSend, N: r.sent, Err: unix.ECANCELED, BufID: -1}
	if r.sent == r.total {
		c.Err = 0
	}
	return c
}

// writeRest writes what it can of the unsent part of st's send now.
func (b *uringBackend) writeRest(st *urState) (n int, errno syscall.Errno) {
	n, _, errno, b.iov = writevFrom(int(st.fd), b.iov, b.rec(st).sbufs, b.rec(st).sent)
	return n, errno
}

// finishSend ends st's send and delivers c.
func (b *uringBackend) finishSend(st *urState, c Completion, fn func(*Completion)) {
	b.endSend(st)
	b.deliver(c, fn)
}

// endSend forgets st's send and its buffers.
func (b *uringBackend) endSend(st *urState) {
	st.sop = 0
	st.bits.set(stSCancel, false)
	r := b.rec(st)
	r.sbufs, r.sent, r.total = nil, 0, 0
	if r.msg != nil {
		clear(r.msg.iov) // keep no buffer alive
		r.msg.hdr = unix.Msghdr{}
	}
	b.releaseIO(st)
}

// Cancel ends tag's operation op after one last non-blocking attempt, once
// the kernel has given up the operation serving it.
func (b *uringBackend) Cancel(tag Tag, op Op) {
	st := b.state(tag)
	if st == nil {
		return
	}
	if op.recvSide() {
		if st.rop != op {
			return
		}
		st.rcancel = true
		if op == OpRecv && st.rk != 0 {
			// Stop receiving ahead before the receive ends: its owner may
			// be handing the socket over, and a multishot left running
			// would take bytes that then go with the tag. The kernel
			// operation's last completion ends the receive (kickRecv),
			// with every byte spilled (fromSpill).
			if !st.rstop {
				st.rstop = true
				b.cancel(makeUD(tag, st.rk))
			}
			return
		}
		if b.hasSpill(st) || st.rk == 0 {
			b.later = append(b.later, tag) // data already there wins
			return
		}
		if !st.rstop {
			st.rstop = true
			b.cancel(makeUD(tag, st.rk))
		}
		return
	}
	if st.sop != op {
		return
	}
	st.bits.set(stSCancel, true)
	if st.bits.has(stZC) {
		b.zcReset(st)
	}
	if st.sk == 0 {
		c := b.lastSend(st)
		b.endSend(st)
		b.ready = append(b.ready, c)
		return
	}
	if !st.bits.has(stSStop) {
		st.bits.set(stSStop, true)
		b.cancel(makeUD(tag, st.sk))
	}
}
