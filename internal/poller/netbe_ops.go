package poller

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/sock"
)

// Submission. Every method runs on the loop goroutine; an operation
// starts a worker, unless it completes at once (a receive served from
// bytes taken earlier, an empty send, a descriptor package net cannot
// wrap).

func (b *netBackend) Recv(tag Tag, buf []byte) {
	b.startRecv(tag, &netOp{op: OpRecv, buf: buf, own: buf == nil})
}

func (b *netBackend) RecvFrom(tag Tag, buf []byte) {
	b.startRecv(tag, &netOp{op: OpRecvFrom, buf: buf})
}

func (b *netBackend) Accept(tag Tag) { b.startRecv(tag, &netOp{op: OpAccept}) }

// submitted returns tag's entry, or panics on a misuse of the contract
// (as every backend does): an unknown tag, or a side already busy.
func (b *netBackend) submitted(tag Tag, recv bool) *netEntry {
	e := b.entry(tag)
	switch {
	case e == nil:
		panic("poller: operation on an unknown tag")
	case recv && e.recv != nil:
		panic("poller: a receive-side operation is already in flight")
	case !recv && e.send != nil:
		panic("poller: a send-side operation is already in flight")
	}
	return e
}

func (b *netBackend) startRecv(tag Tag, op *netOp) {
	e := b.submitted(tag, true)
	e.recv = op
	if op.op == OpRecv && len(e.spill) > 0 {
		b.posted.put(netResult{tag: tag, op: op, n: -1, fd: -1}) // served from the spill
		b.Wake()
		return
	}
	if !b.usable(e, op.op) {
		return
	}
	if e.rDL {
		e.w.setReadDeadline(time.Time{})
		e.rDL = false
	}
	e.rwg.Add(1)
	go b.runRecv(e, op)
}

func (b *netBackend) Send(tag Tag, bufs [][]byte) {
	e := b.submitted(tag, false)
	op := &netOp{op: OpSend, bufs: bufs}
	e.send = op
	total := 0
	for _, p := range bufs {
		total += len(p)
	}
	if total == 0 {
		b.posted.put(netResult{tag: tag, op: op, fd: -1})
		b.Wake()
		return
	}
	if !b.usable(e, OpSend) {
		return
	}
	if e.wDL {
		e.w.setWriteDeadline(time.Time{})
		e.wDL = false
	}
	e.swg.Add(1)
	go b.runSend(e, op)
}

// usable reports whether e's package net view (made by Add) can do op;
// if not, op completes with the reason.
func (b *netBackend) usable(e *netEntry, op Op) bool {
	errno := e.wErr
	if errno == 0 && !e.w.has(op) {
		errno = syscall.EOPNOTSUPP // an accept on a connection, say
	}
	if errno != 0 {
		o := e.recv
		if op == OpSend {
			o = e.send
		}
		b.posted.put(netResult{tag: e.tag, op: o, err: errno, fd: -1})
		b.Wake()
		return false
	}
	return true
}

// Cancel makes the blocked call of op's side return: a deadline in the
// past. The worker's result is then handled as a cancellation (Wait).
func (b *netBackend) Cancel(tag Tag, op Op) {
	e := b.entry(tag)
	if e == nil {
		return
	}
	past := time.Unix(1, 0)
	switch {
	case op.recvSide() && e.recv != nil && e.recv.op == op:
		if e.w.made() {
			e.w.setReadDeadline(past)
			e.rDL = true
			e.rwg.Wait()
		}
	case !op.recvSide() && e.send != nil && e.send.op == op:
		if e.w.made() {
			e.w.setWriteDeadline(past)
			e.wDL = true
			e.swg.Wait()
		}
	}
}

// Workers. They touch only their op and e.w (whose methods are safe
// from any goroutine), post once and end.

func (b *netBackend) runRecv(e *netEntry, op *netOp) {
	defer e.rwg.Done()
	r := netResult{tag: e.tag, op: op, fd: -1}
	var err error
	switch op.op {
	case OpRecv:
		if op.own {
			if err = e.w.waitReadable(); err != nil {
				break
			}
			op.buf = *scratchPool.Get().(*[]byte)
		}
		r.n, err = e.w.reader().Read(op.buf)
		if err == io.EOF {
			err = nil
		}
	case OpRecvFrom:
		r.n, r.from, err = e.w.pc.ReadFrom(op.buf)
	case OpAccept:
		var c net.Conn
		if c, err = e.w.ln.Accept(); err == nil {
			r.from = c.RemoteAddr()
			r.fd, err = connFD(c, e.w.opts)
		}
	}
	r.err = netErrno(err)
	b.posted.put(r)
	b.Wake()
}

func (b *netBackend) runSend(e *netEntry, op *netOp) {
	defer e.swg.Done()
	r := netResult{tag: e.tag, op: op, fd: -1}
	w := e.w.writer()
	if e.stream {
		// net.Buffers gathers them (writev(2) on Unix, one WSASend on
		// Windows): a write per buffer would queue a packet each.
		bufs := append(net.Buffers(nil), op.bufs...)
		n, err := bufs.WriteTo(w)
		r.n, r.err = int(n), netErrno(err)
	} else {
		n, err := w.Write(joinBufs(op.bufs)) // one datagram
		r.n, r.err = n, netErrno(err)
	}
	b.posted.put(r)
	b.Wake()
}

func joinBufs(bufs [][]byte) []byte {
	if len(bufs) == 1 {
		return bufs[0]
	}
	var out []byte
	for _, p := range bufs {
		out = append(out, p...)
	}
	return out
}

// netErrno turns package net's error into the contract's errno: a
// deadline can only be a Cancel's, and a closed wrapper only Remove's or
// Close's.
func netErrno(err error) syscall.Errno {
	var en syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.Is(err, os.ErrDeadlineExceeded):
		return syscall.ECANCELED
	case errors.As(err, &en):
		return sock.PortableErrno(en)
	case errors.Is(err, net.ErrClosed):
		return syscall.EBADF
	case errors.Is(err, errors.ErrUnsupported):
		return syscall.ENOSYS
	case errors.Is(err, io.EOF):
		return 0
	}
	return syscall.EIO
}
