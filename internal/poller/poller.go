// Package poller is gale's I/O backend: it turns a descriptor's readiness, or
// a kernel's completion queue, into completions of the operations a loop
// submitted.
//
// # Backend contract
//
// A Backend is owned by one loop goroutine. Every method except Wake must be
// called from that goroutine only. The contract is completion-shaped, so that
// a readiness backend (epoll, kqueue) and a completion backend (io_uring) are
// interchangeable under internal/loop:
//
//   - Open(p) creates the backend. p supplies the buffers of receives
//     submitted with a nil buffer, at the moment data arrives.
//   - Add(fd, tag, stream) starts tracking fd under tag. No I/O happens yet.
//     stream reports a SOCK_STREAM socket.
//   - Remove(tag) stops tracking. An operation still in flight ends with no
//     completion; one that completed before Remove may still be delivered
//     under the old tag, which the loop recognises as stale (and, for an
//     accept, closes the descriptor it carries). The caller closes fd
//     afterwards.
//   - Recv(tag, buf) submits one receive: into buf, or into a buffer from the
//     Provider when buf is nil. It completes once, with the first data, a
//     zero-byte read (end of file on a stream), or an error.
//   - Send(tag, bufs) submits a send of every byte of bufs, in order. It
//     completes once: when all bytes are written, or with the count written
//     before an error. bufs and their contents must stay unchanged until then.
//   - Accept(tag) submits one accept on a listening socket. It completes
//     with N set to the new descriptor (non-blocking, close-on-exec) and
//     the peer's address in Peer or From (see Completion), or with an
//     error such as EMFILE; the caller resubmits for the next connection.
//   - RecvFrom(tag, buf) receives one datagram into buf (never a provided
//     buffer), with From set to its source.
//   - Cancel(tag, op) ends an operation in flight after one last
//     non-blocking attempt: data already there, or send space, still
//     counts. It then completes with ECANCELED and the progress made so
//     far, unless it completed. A cancelled receive brings every byte the
//     backend took from the socket ahead of it, however many, and the
//     backend takes none for tag after it until the next receive: an
//     owner that submits a receive, cancels it and removes the tag hands
//     the socket over with no byte lost.
//   - Wait(timeout, fn) blocks until at least one completion is ready, Wake is
//     called, or timeout passes (a negative timeout waits for ever), then
//     calls fn once for every ready completion, in order. fn may submit more
//     operations; their completions are delivered by this or the next Wait.
//     An error means the backend cannot go on (every later Wait returns
//     it too): the caller stops and closes it. A backend never panics on
//     a system call's result; submitting never fails, and a failure to
//     submit is reported by Wait.
//   - Wake makes a blocked or the next Wait return. Safe from any goroutine.
//   - Close releases the backend. Descriptors still added are not closed;
//     completions not yet delivered are dropped, and the descriptors that
//     accepts among them produced are closed, so none leaks.
//
// At most one operation of the receive side (Recv, RecvFrom, Accept) and
// one Send may be in flight per tag. A completion's Err
// is the raw errno (0 on success): EAGAIN never escapes, ECANCELED marks a
// cancelled operation and NoSpace a nil-buffer receive for which the
// Provider had no space; the caller resubmits it when space is back.
//
// # Memory the kernel sees
//
// The words that name an operation to the kernel (the epoll event's data
// word, io_uring's user_data) carry a Tag, a slot index and a generation
// number, never a Go pointer; events whose generation is stale are
// dropped. kqueue's udata is pointer-typed, so its events carry the
// descriptor instead (kqueue_bsd.go).
//
// Buffer addresses are another matter on io_uring: the entry of a send,
// or of a receive into the caller's buffer, carries that buffer's address
// in the Go heap, and a sendmsg's the address of a Go msghdr and its
// vector (a nil-buffer receive uses the ring's own buffers, outside the
// heap). The backend keeps that memory referenced (in the tag's state,
// or in an orphan record once the tag is removed) until the operation's
// last completion, so the garbage collector can neither free nor reuse it
// while the kernel may read or write it; and Go's heap does not move
// objects, so the address stays valid. A backend closed before the
// kernel let go keeps the memory for good (keepForever).
package poller

import (
	"net/netip"
	"syscall"
	"time"
)

// NoSpace is the Err of a nil-buffer receive for which the Provider had no
// space. It is no errno of the kernel's (those stay below 4096), so the
// owner tells it from a receive that failed with ENOBUFS, which is an
// error of the connection, not a reason to wait for space.
const NoSpace = syscall.Errno(1 << 16)

// Tag names an owner of operations: a slot index in the loop's table and the
// slot's generation, which changes every time the slot is reused.
type Tag uint64

// MakeTag packs slot and gen into a Tag.
func MakeTag(slot, gen uint32) Tag { return Tag(gen)<<32 | Tag(slot) }

// Slot returns the slot index of t.
func (t Tag) Slot() uint32 { return uint32(t) }

// Gen returns the generation of t.
func (t Tag) Gen() uint32 { return uint32(t >> 32) }

// Op is the kind of an operation.
type Op uint8

// Operations a backend carries out.
const (
	OpRecv Op = 1 + iota
	OpSend
	OpAccept
	OpRecvFrom
)

// side tells which half of a descriptor an operation occupies.
func (op Op) recvSide() bool { return op == OpRecv || op == OpAccept || op == OpRecvFrom }

// Completion is the single result of one submitted operation. It is valid
// only during the callback that receives it.
type Completion struct {
	Tag Tag
	Op  Op
	// N is the number of bytes moved, including the progress made before an
	// error or a cancellation.
	N int
	// Err is the raw errno, 0 on success.
	Err syscall.Errno
	// Buf holds the received bytes of a receive (len(Buf) == N).
	Buf []byte
	// BufID is the Provider's identifier of Buf for a nil-buffer receive,
	// and -1 otherwise.
	BufID int
	// Peer is the IPv4 or IPv6 peer of an accepted connection, as the
	// kernel reported it (a v4-mapped address stays mapped), when the
	// backend decoded it without allocating (sock.AcceptPeer,
	// sock.PeerName: Linux only, and not for an IPv6 address with a scope
	// ID). From is then nil. Otherwise, and for every other operation,
	// Peer is invalid (the zero netip.AddrPort).
	Peer netip.AddrPort
	// From is the source of a datagram, and the peer of an accepted
	// connection whose Peer is invalid: a Unix socket's, an IPv6 one with
	// a scope ID, or any from a backend that does not fill Peer (kqueue).
	// It is nil for an accept whose peer the backend could not learn
	// (getpeername(2) after io_uring's accept failed: the peer already
	// reset the connection). A consumer of an accept takes Peer when it
	// is valid, and From otherwise.
	From Sockaddr
}

// Provider lends buffers to receives submitted without one. Both methods are
// called on the loop goroutine.
type Provider interface {
	// Provide returns free space to receive into and its identifier, or a
	// nil buffer when there is none.
	Provide() (buf []byte, id int)
	// Commit records that n bytes were received at the start of the space
	// last returned for id.
	Commit(id, n int)
}

// Backend is the contract above; see the package documentation.
type Backend interface {
	Add(fd int, tag Tag, stream bool) error
	Remove(tag Tag) error
	Recv(tag Tag, buf []byte)
	Send(tag Tag, bufs [][]byte)
	Accept(tag Tag)
	RecvFrom(tag Tag, buf []byte)
	Cancel(tag Tag, op Op)
	Wait(timeout time.Duration, fn func(*Completion)) error
	Wake() error
	Close() error
	// Kind names the backend.
	Kind() Kind
	// Traits says what the backend does beyond the contract, for owners
	// that adapt to it (by trait, never by Kind).
	Traits() Traits
}

// Traits are what a backend does beyond the contract.
type Traits uint8

const (
	// ReadsAhead: the backend may take a stream's bytes from the socket
	// while no receive is in flight (io_uring's multishot receive goes on
	// between receives). A receive submitted and cancelled at once brings
	// them, and stops it; until then the socket does not hold them.
	ReadsAhead Traits = 1 << iota
	// DefersSends: sends asked for during a loop turn reach the kernel
	// together when the loop next waits, each a completion of its own. An
	// owner gains by merging the small sends one callback makes into one
	// (engine's write batching); on a backend without it each send is a
	// system call made at once, and merging only delays it.
	DefersSends
)

// Has reports whether t includes every trait of u.
func (t Traits) Has(u Traits) bool { return t&u == u }

// ZeroCopier is implemented by a backend that can send without copying
// the bytes into the kernel (io_uring's IORING_OP_SEND_ZC). SetZeroCopy
// makes stream sends of at least min bytes zero-copy (0: none) and
// reports whether the kernel has them. Such a send completes only once
// the kernel has released the buffers, so the Send contract (bufs stay
// unchanged until the completion) covers it. Call it before the first
// operation, on the loop goroutine.
type ZeroCopier interface {
	SetZeroCopy(min int) bool
}

// Transient is implemented by a Provider whose owner is done with a
// receive's bytes when the completion's callback returns (it copies what
// it keeps). A completion backend may then lend its own buffer for a
// nil-buffer receive, without Provide, Commit or a copy: the completion's
// BufID is -1 and Buf is valid during the callback only. The backend may
// call Provide when it opens to learn the size of the owner's buffer, and
// then delivers no more than that at once.
type Transient interface {
	Provider
	Transient() bool
}

// HandOff is implemented by a Provider whose owner hands its completions
// to other goroutines (aio's WaitIO, netconn's parked Read and Write)
// instead of finishing with them on the loop goroutine.
//
// On epoll the loop then waits through a relay where there is more than
// one processor: a goroutine of its own blocks in epoll_wait, so that the
// hand-offs between the loop and those goroutines stay on one thread
// instead of waking an idle one each time (relay_linux.go). On io_uring,
// unless the provider is also Transient, the ring is one any thread may
// drive and the loop goroutine is left unlocked: a goroutine locked to its
// thread can only run there, so each hand-off to and from it would cost a
// switch between threads (futex calls), paid per result. An owner that reads the ring's buffers in
// place (Transient: engine, netconn) keeps the single-issuer ring, whose
// deferred task running makes fewer kernel entries; for netconn, whose
// every receive is handed off, it still measured faster than unbound.
type HandOff interface {
	Provider
	HandsOff() bool
}

// handsOff reports whether p's owner hands its completions off.
func handsOff(p Provider) bool {
	h, ok := p.(HandOff)
	return ok && h.HandsOff()
}

// transient reports whether p's buffers are free again once a completion's
// callback returns.
func transient(p Provider) bool {
	t, ok := p.(Transient)
	return ok && t.Transient()
}
