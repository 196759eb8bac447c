package poller

import (
	"unsafe"

	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// Zero-copy sends (IORING_OP_SEND_ZC, IORING_OP_SENDMSG_ZC; Linux 6.0 and
// 6.1). The kernel pins the caller's pages instead of copying them into
// the socket, and completes such a send twice: first the result (with
// CQEFMore when a notification follows), then a notification (CQEFNotif)
// once the network stack has let the pages go. The buffers may change
// only after the notification, so the backend holds the result until it
// arrives, and only then resubmits the rest of a short send or completes
// the send: a tag's send side still has one kernel operation at a time,
// whose last completion is the notification. Sockets other than TCP
// (AF_UNIX, say) get copying sends, and so does one that refuses a
// zero-copy send (EOPNOTSUPP, before any byte moves) from then on: on
// Linux 6.18 that is every accepted TCP socket, so only
// connections this side dialed send zero-copy.
//
// Bytes the kernel has queued in the socket keep their pages pinned until
// the peer acknowledges them, which for a peer that stopped reading is
// never. So cancelling a zero-copy send, or removing its tag, resets the
// connection (zcReset): the kernel drops what it queued, lets the pages
// go, and the send completes. A cancelled copying send leaves the
// connection as it was.
//
// It pays off only for large sends leaving through a real device: on
// loopback the receiving socket takes a copy anyway (the notification
// then reports it, uring.NotifZCCopied), and every send costs a second
// completion.

// SetZeroCopy makes stream sends of at least min bytes zero-copy sends
// (0: none) and reports whether the kernel has them; where it does not,
// sends stay copying.
func (b *uringBackend) SetZeroCopy(min int) bool {
	if !b.r.Supports(uring.OpSendZC) || !b.r.Supports(uring.OpSendmsgZC) {
		b.zcMin = 0
		return false
	}
	b.zcMin = max(min, 0)
	return true
}

// zeroCopy tells whether st's send goes zero-copy. The first time, it
// asks the socket's family: only TCP has zero-copy sends.
func (b *uringBackend) zeroCopy(st *urState) bool {
	if b.zcMin == 0 || !st.bits.has(stStream) || st.bits.has(stZCNo) || b.rec(st).total < b.zcMin {
		return false
	}
	if !st.bits.has(stZCChecked) {
		st.bits.set(stZCChecked, true)
		d, err := unix.GetsockoptInt(int(st.fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
		if err != nil || (d != unix.AF_INET && d != unix.AF_INET6) {
			st.bits.set(stZCNo, true)
		}
	}
	return !st.bits.has(stZCNo)
}

// prepZeroCopy turns e, a prepared SEND or SENDMSG, into its zero-copy
// form.
func prepZeroCopy(e *uring.SQE) {
	if e.Opcode == uring.OpSend {
		e.Opcode = uring.OpSendZC
	} else {
		e.Opcode = uring.OpSendmsgZC
	}
	e.IOPrio |= uring.SendZCReportUsage
}

// zcHold handles the two completions of a zero-copy send. It returns
// false while the send waits for its notification (the result is kept in
// st), and true with the result to act on once the last completion is
// in.
func (b *uringBackend) zcHold(st *urState, c *uring.CQE) bool {
	if c.Flags&uring.CQEFNotif != 0 {
		if uint32(c.Res)&uring.NotifZCCopied != 0 {
			b.zcCopied++
		}
		c.Res, c.Flags, b.rec(st).zres = b.rec(st).zres, 0, 0
		return true
	}
	b.zcSends++
	if c.Flags&uring.CQEFMore != 0 {
		b.rec(st).zres = c.Res
		return false
	}
	return true // failed before the kernel took any page: no notification
}

// zcReset makes the kernel let go of the pages of st's zero-copy send at
// once: connect(2) to an AF_UNSPEC address disconnects a TCP socket
// (tcp_disconnect), dropping the bytes queued in it and resetting the
// connection. The send in flight then ends, and its notification follows.
func (b *uringBackend) zcReset(st *urState) {
	if st.bits.has(stZReset) {
		return
	}
	st.bits.set(stZReset, true)
	var sa [unix.SizeofSockaddrInet6]byte // sa_family 0: AF_UNSPEC
	unix.RawSyscall(unix.SYS_CONNECT, uintptr(int(st.fd)), uintptr(unsafe.Pointer(&sa[0])), uintptr(len(sa)))
}
