package poller

import (
	"net"
	"syscall"
	"time"
)

// Wait blocks until a worker posts, Wake is called or timeout passes,
// then turns every posted result into its completion. A nil-buffer
// receive takes the Provider's space just before its callback, so the
// Provider may reuse the space once the callback returns.
func (b *netBackend) Wait(timeout time.Duration, fn func(*Completion)) error {
	b.block(timeout)
	b.results = b.posted.take(b.results)
	for i := range b.results {
		b.handle(&b.results[i], fn)
		b.results[i] = netResult{}
	}
	return nil
}

func (b *netBackend) block(timeout time.Duration) {
	switch {
	case timeout == 0:
		select {
		case <-b.sig:
		default:
		}
	case timeout < 0:
		<-b.sig
	default:
		b.timer.Reset(timeout)
		select {
		case <-b.sig:
		case <-b.timer.C:
		}
		b.timer.Stop()
	}
}

// handle delivers r, unless its tag was removed or its op is not the
// one in flight (then what it holds is let go).
func (b *netBackend) handle(r *netResult, fn func(*Completion)) {
	e := b.entry(r.tag)
	if e == nil || (e.recv != r.op && e.send != r.op) {
		b.drop(r)
		return
	}
	op := r.op
	if op.op == OpSend {
		e.send = nil
		if r.err == syscall.ECANCELED {
			b.lastSend(e, r)
		}
		b.deliver(Completion{Tag: r.tag, Op: OpSend, N: r.n, Err: r.err, BufID: -1}, fn)
		return
	}
	e.recv = nil
	if r.err == syscall.ECANCELED && r.n == 0 {
		b.lastAttempt(e, r)
	}
	switch op.op {
	case OpAccept:
		c := Completion{Tag: r.tag, Op: OpAccept, N: r.fd, Err: r.err, BufID: -1}
		if r.err == 0 {
			c.Peer, c.From = r.peer, r.sa
			if r.from != nil {
				setPeer(&c, r.from)
			}
		}
		b.deliver(c, fn)
	case OpRecvFrom:
		c := Completion{Tag: r.tag, Op: OpRecvFrom, N: r.n, Err: r.err, Buf: op.buf[:r.n], BufID: -1}
		if c.From = r.sa; r.from != nil {
			c.From = toSockaddr(r.from)
		}
		b.deliver(c, fn)
	default:
		b.deliverRecv(e, r, fn)
	}
}

// deliverRecv delivers a receive: into the caller's buffer, or into the
// Provider's space, from the worker's scratch (what does not fit stays
// in e.spill) or from e.spill.
func (b *netBackend) deliverRecv(e *netEntry, r *netResult, fn func(*Completion)) {
	op := r.op
	c := Completion{Tag: r.tag, Op: OpRecv, N: r.n, Err: r.err, BufID: -1}
	if !op.own {
		c.Buf = op.buf[:r.n]
		b.deliver(c, fn)
		return
	}
	data := e.spill
	if r.n >= 0 {
		data = op.buf[:r.n]
	}
	if len(data) == 0 {
		b.putScratch(op)
		c.N = 0
		b.deliver(c, fn) // end of file or an error
		return
	}
	buf, id := b.prov.Provide()
	c.Err = 0
	if buf == nil {
		c.N, c.Err = 0, NoSpace
	} else {
		c.N = copy(buf, data)
		c.Buf, c.BufID = buf[:c.N], id
		b.prov.Commit(id, c.N)
	}
	rest := data[c.N:]
	if r.n >= 0 {
		e.spill = append(e.spill, rest...)
		b.putScratch(op)
	} else if e.spill = rest; len(rest) == 0 {
		e.spill = nil
	}
	b.deliver(c, fn)
}

func (b *netBackend) deliver(c Completion, fn func(*Completion)) { fn(&c) }

// drop lets go of what a result no one waits for holds.
func (b *netBackend) drop(r *netResult) {
	if r.fd >= 0 {
		closeFD(r.fd)
	}
	if r.op != nil && r.op.own && r.n >= 0 {
		b.putScratch(r.op)
	}
}

func (b *netBackend) putScratch(op *netOp) {
	if op.own && op.buf != nil {
		buf := op.buf[:cap(op.buf)]
		scratchPool.Put(&buf)
		op.buf = nil
	}
}

// setPeer records an accepted connection's peer: Peer for an IP one,
// From otherwise.
func setPeer(c *Completion, a net.Addr) {
	if t, ok := a.(*net.TCPAddr); ok && t.Zone == "" {
		c.Peer = t.AddrPort()
		return
	}
	if a != nil {
		c.From = toSockaddr(a)
	}
}
