//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package poller

import (
	"syscall"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// tryRecv performs the receive-side operation of st once and reports its
// completion; done is false when it found nothing and stays parked.
func (e *emul) tryRecv(st *fdState) (c Completion, done bool) {
	switch st.rop {
	case OpAccept:
		c, done = e.accept(st)
	case OpRecvFrom:
		c, done = e.recvFrom(st)
	default:
		c, done = e.recv(st)
	}
	if done {
		st.rop, st.cancel = 0, false
		e.endRecv(st)
	}
	return c, done
}

func (e *emul) recv(st *fdState) (Completion, bool) {
	buf, id := e.recvBuf(st), -1
	if buf == nil {
		buf, id = e.prov.Provide()
		if buf == nil {
			return Completion{Tag: st.tag, Op: OpRecv, Err: NoSpace, BufID: -1}, true
		}
	}
	n, errno := sock.Read(int(st.fd), buf)
	if errno == unix.EAGAIN {
		st.drained = true
		return Completion{}, false
	}
	// A short read on a stream emptied the receive queue; a zero-byte read
	// (end of file) or an error will repeat at once, so it is not "drained".
	st.drained = errno == 0 && st.stream && !st.hup && n > 0 && n < len(buf)
	if id >= 0 && n > 0 {
		e.prov.Commit(id, n)
	}
	return Completion{Tag: st.tag, Op: OpRecv, N: n, Err: errno, Buf: buf[:n], BufID: id}, true
}

func (e *emul) recvFrom(st *fdState) (Completion, bool) {
	c, errno := recvFrom(int(st.fd), st.tag, e.recvBuf(st))
	if errno == unix.EINTR {
		return Completion{}, false // the edge is not consumed: retry now
	}
	if errno == unix.EAGAIN {
		st.drained = true
		return Completion{}, false
	}
	return c, true
}

// recvFrom receives one datagram on fd into buf. The completion is valid
// unless errno is EINTR or EAGAIN.
func recvFrom(fd int, tag Tag, buf []byte) (Completion, syscall.Errno) {
	n, from, err := unix.Recvfrom(fd, buf, 0)
	errno := errnoOf(err)
	if errno != 0 {
		n = 0
	}
	return Completion{Tag: tag, Op: OpRecvFrom, N: n, Err: errno, Buf: buf[:n], BufID: -1, From: from}, errno
}

func (e *emul) accept(st *fdState) (Completion, bool) {
	for {
		nfd, peer, from, err := sock.AcceptPeer(int(st.fd), &e.rsa)
		switch errno := errnoOf(err); errno {
		case 0:
			return Completion{Tag: st.tag, Op: OpAccept, N: nfd, BufID: -1, Peer: peer, From: from}, true
		case unix.EINTR, unix.ECONNABORTED:
			// ECONNABORTED: the peer left the queue before we took it
			// (accept(2)); try the next one.
			continue
		case unix.EAGAIN:
			st.drained = true
			return Completion{}, false
		default:
			return Completion{Tag: st.tag, Op: OpAccept, Err: errno, BufID: -1}, true
		}
	}
}

// trySend performs st's send and reports its completion once it is
// finished; done is false while it stays parked.
func (e *emul) trySend(st *fdState) (c Completion, done bool) {
	c, done = e.send(st)
	if done {
		st.sop = 0
		e.endSend(st)
	}
	return c, done
}

// send writes as much of st's send as the socket takes, and completes once
// everything is written or on an error.
func (e *emul) send(st *fdState) (Completion, bool) {
	for {
		n, tried, errno := e.write(st)
		if errno == unix.EAGAIN {
			st.full = true
			return Completion{}, false
		}
		io := e.ios.of(st)
		io.sent += n
		if errno != 0 || io.sent == sendLen(io.sendBufs) {
			return Completion{Tag: st.tag, Op: OpSend, N: io.sent, Err: errno, BufID: -1}, true
		}
		if st.stream && n < tried {
			// A short write filled the send buffer; wait for the edge.
			st.full = true
			return Completion{}, false
		}
	}
}

// maxIOV is the most buffers one writev(2) takes (IOV_MAX on Linux and
// the BSDs).
const maxIOV = 1024

// write issues one write or writev for the unsent part of st's send and
// returns the bytes written and the bytes it tried to write.
func (e *emul) write(st *fdState) (n, tried int, errno syscall.Errno) {
	io := e.ios.of(st)
	if len(io.sendBufs) == 1 {
		b := io.sendBufs[0][io.sent:]
		n, errno = sock.Write(int(st.fd), b)
		return n, len(b), errno
	}
	n, tried, errno, e.iov = writevFrom(int(st.fd), e.iov, io.sendBufs, io.sent)
	return n, tried, errno
}

// writevFrom makes one writev(2) of bufs past their first skip bytes, with
// iov as scratch, which it returns cleared for reuse.
func writevFrom(fd int, iov []unix.Iovec, bufs [][]byte, skip int) (n, tried int, errno syscall.Errno, scratch []unix.Iovec) {
	iov, tried = appendIovecs(iov[:0], bufs, skip)
	n, errno = sock.Writev(fd, iov)
	clear(iov) // keep no buffer alive
	return n, tried, errno, iov[:0]
}

// appendIovecs appends the vectors of bufs past their first skip bytes to
// iov, at most maxIOV in all, and returns them and their byte count.
func appendIovecs(iov []unix.Iovec, bufs [][]byte, skip int) ([]unix.Iovec, int) {
	total := 0
	for _, b := range bufs {
		if skip >= len(b) {
			skip -= len(b)
			continue
		}
		b = b[skip:]
		skip = 0
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		iov = append(iov, v)
		total += len(b)
		if len(iov) == maxIOV {
			break
		}
	}
	return iov, total
}

func sendLen(bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	return n
}

// errnoOf returns err as an errno; 0 for nil.
func errnoOf(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if errno, ok := err.(syscall.Errno); ok {
		return errno
	}
	return unix.EIO
}
