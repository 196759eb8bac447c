package loop

import (
	"net/netip"
	"syscall"

	"github.com/galeio/gale/internal/poller"
)

// Tag names a descriptor attached to a loop (Attach): a slot and a
// generation, so that a completion for a released tag is never taken for
// its slot's next owner's.
type Tag = poller.Tag

// Op is the kind of an operation an owner submits.
type Op = poller.Op

// The operations an owner may submit.
const (
	OpRecv     = poller.OpRecv
	OpSend     = poller.OpSend
	OpAccept   = poller.OpAccept
	OpRecvFrom = poller.OpRecvFrom
)

// Provider lends buffers to receives submitted without one (see
// poller.Provider). A Provider that also has a Transient method returning
// true is done with a receive's bytes when its owner's Complete returns,
// which lets a completion backend lend its own buffers instead.
type Provider = poller.Provider

// Owner receives the completions of the operations submitted under the
// tags it attached. Complete runs on the loop goroutine.
type Owner interface {
	Complete(l *Loop, c Completion)
}

// Completion is the single result of one submitted operation. It is valid
// only during the Complete call that receives it, and so is the slice
// Bytes returns when the receive used the loop's Provider.
type Completion struct{ c *poller.Completion }

// Op returns the operation that completed.
func (c Completion) Op() Op { return c.c.Op }

// N returns the bytes moved, including those moved before an error or a
// cancellation.
func (c Completion) N() int { return c.c.N }

// Bytes returns the bytes a receive brought.
func (c Completion) Bytes() []byte { return c.c.Buf }

// Space returns the Provider's identifier of the space a nil-buffer
// receive filled (what Provide returned with it), or -1 when the bytes
// are in the receive's own buffer or the backend's.
func (c Completion) Space() int { return c.c.BufID }

// FD returns the descriptor an accept produced; the owner takes it over.
func (c Completion) FD() int { return c.c.N }

// Peer returns the IPv4 or IPv6 peer of an accepted connection when the
// backend took it without allocating, as the kernel reported it (a
// v4-mapped address stays mapped); From is then nil. It is invalid
// otherwise (see poller.Completion).
func (c Completion) Peer() netip.AddrPort { return c.c.Peer }

// From returns the source of a datagram, or the peer of an accepted
// connection whose Peer is invalid (a Unix socket's peer, an IPv6 one
// with a scope ID, any on a backend that does not fill Peer); nil when
// the backend could not learn the peer. An owner of an accept takes Peer
// when it is valid, and From otherwise.
func (c Completion) From() poller.Sockaddr { return c.c.From }

// Canceled reports that Cancel ended the operation (after N bytes).
func (c Completion) Canceled() bool { return c.c.Err == syscall.ECANCELED }

// NoSpace reports a nil-buffer receive that found the Provider without
// space: nothing was received, and the owner submits it again once space
// is back.
func (c Completion) NoSpace() bool { return c.c.Err == poller.NoSpace }

// Errno returns the error the kernel reported for the operation: 0 when it
// succeeded, was canceled, or found no space. EINTR and EAGAIN never
// appear: the backend retries them.
func (c Completion) Errno() syscall.Errno {
	if c.Canceled() || c.NoSpace() {
		return 0
	}
	return c.c.Err
}

// Recv submits one receive on tag, into buf or, when buf is nil, into
// space from the loop's Provider taken when data arrives. Loop goroutine
// only; at most one receive-side operation per tag at a time.
func (l *Loop) Recv(tag Tag, buf []byte) { l.be.Recv(tag, buf) }

// RecvFrom submits the receive of one datagram into buf. Loop goroutine
// only.
func (l *Loop) RecvFrom(tag Tag, buf []byte) { l.be.RecvFrom(tag, buf) }

// Accept submits one accept on a listening socket. Loop goroutine only.
func (l *Loop) Accept(tag Tag) { l.be.Accept(tag) }

// Send submits a send of every byte of bufs, in order; bufs and their
// bytes must stay unchanged until it completes. Loop goroutine only; at
// most one send per tag at a time.
func (l *Loop) Send(tag Tag, bufs [][]byte) { l.be.Send(tag, bufs) }

// Cancel ends tag's operation op after one last non-blocking attempt; it
// then completes, canceled, with the progress it made, unless it
// completed first. Loop goroutine only.
func (l *Loop) Cancel(tag Tag, op Op) { l.be.Cancel(tag, op) }
