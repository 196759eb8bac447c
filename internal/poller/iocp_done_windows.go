package poller

import (
	"net"
	"syscall"

	"github.com/galeio/gale/internal/sock"
)

// Delivery. Each done function clears its side before calling fn, which
// may submit the next operation on it.

// doneRecv delivers a receive. One that was cancelled before it moved a
// byte makes the last attempt the contract asks for: a non-blocking recv
// of what arrived meanwhile.
func (b *iocpBackend) doneRecv(e *iocpEnt, n int, en syscall.Errno, fn func(*Completion)) {
	buf, cancelled := e.rbuf, e.rCancel || en == syscall.ECANCELED
	e.rop, e.rCancel, e.rbuf = 0, false, nil
	if buf == nil {
		b.doneProvided(e, en, cancelled, fn)
		return
	}
	if cancelled && n == 0 && (en == 0 || en == syscall.ECANCELED) && len(buf) > 0 {
		n, en = lastRecv(e.fd, buf)
	}
	c := Completion{Tag: e.tag, Op: OpRecv, N: n, Err: en, Buf: buf[:n], BufID: -1}
	b.deliver(c, fn)
}

// lastRecv is a cancelled receive's last attempt.
func lastRecv(fd int, buf []byte) (int, syscall.Errno) {
	k, en := sock.Read(fd, buf)
	switch {
	case en == syscall.EAGAIN:
		return 0, syscall.ECANCELED
	case en != 0:
		return 0, sock.PortableErrno(en)
	}
	return k, 0
}

// doneProvided delivers a receive into the Provider's space, whose
// zero-byte WSARecv said that data (or the end, or an error) is there:
// the space is taken now, and filled with a non-blocking recv. If
// nothing is there after all, the zero-byte receive starts again,
// unless it was cancelled.
func (b *iocpBackend) doneProvided(e *iocpEnt, en syscall.Errno, cancelled bool, fn func(*Completion)) {
	c := Completion{Tag: e.tag, Op: OpRecv, BufID: -1}
	if en != 0 && en != syscall.ECANCELED {
		c.Err = en
		b.deliver(c, fn)
		return
	}
	buf, id := b.prov.Provide()
	if buf == nil {
		c.Err = NoSpace
		if cancelled {
			c.Err = syscall.ECANCELED
		}
		b.deliver(c, fn)
		return
	}
	k, rerr := sock.Read(e.fd, buf)
	switch {
	case rerr == syscall.EAGAIN && cancelled:
		c.Err = syscall.ECANCELED
	case rerr == syscall.EAGAIN:
		e.rop = OpRecv
		b.recv(e)
		return
	case rerr != 0:
		c.Err = sock.PortableErrno(rerr)
	case k > 0:
		b.prov.Commit(id, k)
		c.N, c.Buf, c.BufID = k, buf[:k], id
	}
	b.deliver(c, fn)
}

// errMoreData is WSAEMSGSIZE's NTSTATUS as a Win32 error: a datagram
// longer than the buffer, whose rest is dropped, as recvfrom(2) drops it.
const errMoreData = syscall.Errno(234) // ERROR_MORE_DATA

func (b *iocpBackend) doneRecvFrom(e *iocpEnt, n int, en syscall.Errno, fn func(*Completion)) {
	buf := e.rbuf
	e.rop, e.rCancel, e.rbuf = 0, false, nil
	if en == errMoreData {
		en = 0
	}
	c := Completion{Tag: e.tag, Op: OpRecvFrom, N: n, Err: en, Buf: buf[:n], BufID: -1}
	if en == 0 {
		io := b.slab.at(b.index(e))
		if ap := sock.SockaddrAt(addr(&io.from[0]), int(io.fromLen)); ap.IsValid() {
			c.From = net.UDPAddrFromAddrPort(ap)
		}
	}
	b.deliver(c, fn)
}

// errUnexpNet is ERROR_UNEXP_NET_ERR, Wine's status for an AcceptEx
// whose connection was reset.
const errUnexpNet = syscall.Errno(59)

// doneAccept delivers an accept: the socket AcceptEx filled, made a
// socket of its own and non-blocking, with its peer.
func (b *iocpBackend) doneAccept(e *iocpEnt, en syscall.Errno, fn func(*Completion)) {
	as := e.acc
	e.rop, e.rCancel, e.acc = 0, false, -1
	if en == 0 && as >= 0 {
		en = sock.PortableErrno(sock.FinishAccept(as, e.fd))
	}
	if en == syscall.ECONNRESET || en == errUnexpNet {
		// The peer reset the connection before AcceptEx took it
		// (ERROR_NETNAME_DELETED on Windows, which package net skips in
		// internal/poll's accept; ERROR_UNEXP_NET_ERR under Wine 8).
		// Unlike accept(2) on Linux, no socket is left to hand over:
		// the owner sees an aborted connection and accepts again.
		en = syscall.ECONNABORTED
	}
	c := Completion{Tag: e.tag, Op: OpAccept, N: -1, Err: en, BufID: -1}
	if en != 0 || as < 0 {
		if as >= 0 {
			sock.Close(as)
		}
		b.deliver(c, fn)
		return
	}
	io := b.slab.at(b.index(e))
	peer := sock.AcceptPeerAt(addr(&io.addrs[0]))
	if peer.Addr().Zone() != "" {
		c.From = net.TCPAddrFromAddrPort(peer)
	} else if peer.IsValid() {
		c.Peer = peer
	}
	c.N = as
	b.deliver(c, fn)
}

// doneSend goes on with a send that has bytes left, and delivers it once
// all are sent, it failed, or it was cancelled (after a last
// non-blocking attempt at the rest).
func (b *iocpBackend) doneSend(e *iocpEnt, n int, en syscall.Errno, fn func(*Completion)) {
	e.sdone += n
	left := e.sdone < e.stotal
	switch {
	case en == 0 && left && n > 0 && !e.sCancel:
		b.send(e)
		return
	case en == 0 && left && !e.sCancel:
		en = syscall.EIO // a send that moved nothing and did not fail
	}
	if left && (en == syscall.ECANCELED || e.sCancel) {
		en = b.lastSend(e)
	}
	c := Completion{Tag: e.tag, Op: OpSend, N: e.sdone, Err: en, BufID: -1}
	e.sop, e.sCancel, e.sbufs = 0, false, nil
	b.deliver(c, fn)
}

// lastSend is a cancelled send's last attempt: the rest, as far as the
// socket takes it without waiting. It returns 0 if all went, ECANCELED
// otherwise.
func (b *iocpBackend) lastSend(e *iocpEnt) syscall.Errno {
	skip := e.sdone
	for _, p := range e.sbufs {
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		k, en := sock.Write(e.fd, p[skip:])
		e.sdone += k
		if en != 0 || k < len(p)-skip {
			return syscall.ECANCELED
		}
		skip = 0
	}
	return 0
}

// orphanDone lets go of what the ended operation of entry i's side held;
// the entry is free once both sides are.
func (b *iocpBackend) orphanDone(i int32, side int) {
	e := &b.ents[i]
	if side == 0 {
		if e.acc >= 0 {
			sock.Close(e.acc)
			e.acc = -1
		}
		e.rop, e.rbuf = 0, nil
	} else {
		e.sop, e.sbufs = 0, nil
	}
	if !e.live && e.rop == 0 && e.sop == 0 {
		b.free(i)
	}
}

// deliver hands c to fn through b.cur: the address of a local passed to
// a function value would move it to the heap on every completion.
// Callbacks never reenter delivery, so one suffices.
func (b *iocpBackend) deliver(c Completion, fn func(*Completion)) {
	b.cur = c
	fn(&b.cur)
	b.cur = Completion{}
}
