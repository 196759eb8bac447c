package poller

import (
	"os"
	"sync/atomic"
	"syscall"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/windows"
)

// iocpBackend is the Windows backend: one I/O completion port per loop.
// Receives and sends are Winsock's overlapped calls (WSARecv, WSASend,
// WSARecvFrom), accepts AcceptEx into a socket made beforehand, and Wait
// is GetQueuedCompletionStatusEx. A receive into the Provider's space is
// a zero-byte WSARecv, which takes nothing from the socket and completes
// once data is there; the bytes are read at delivery, with a
// non-blocking recv into the space Provide returns then.
//
// The kernel names an operation by its OVERLAPPED's address, in the
// slab (iocp_slab_windows.go): one entry of two OVERLAPPEDs per added
// socket, outside the Go heap, whose address gives the entry and side.
// The Go buffers an operation reads or writes stay referenced by the
// entry until its completion, as io_uring's do (see the package
// documentation). An entry whose tag was removed with an operation in
// flight is an orphan until that operation's packet arrives: its
// memory is the kernel's until then, so it is not reused, and what the
// packet brings is dropped (an accepted socket closed).
//
// A completion port takes a socket only if no port has it yet. Package
// net gives every socket it makes to the Go runtime's port, and a
// duplicate (WSADuplicateSocket) shares its original's, so Add cannot
// associate those: a listener or dial of package net, a user's
// connection. Such a tag is served by a net backend inside this one
// (iocp_net_windows.go), whose workers wake the port.
//
// Every method but Wake runs on the loop goroutine.
type iocpBackend struct {
	port  windows.Handle
	prov  Provider
	slab  iocpSlab
	ents  []iocpEnt  // by slab entry
	slots []iocpSlot // by tag slot
	// ready holds operations that failed or finished at submission
	// (no packet comes for them), handled by the next Wait as packets.
	ready    []overlappedEntry
	inflight int               // operations whose packet (or ready entry) is due
	spare    []overlappedEntry // ready's double buffer
	evs      []overlappedEntry
	cur      Completion  // the completion being delivered (deliver)
	woken    atomic.Bool // a wake-up packet is posted and not yet seen
	nb       *netBackend // serves the tags the port cannot take; nil until one
	err      error       // why Wait cannot go on
}

// iocpSlot is what a tag slot holds: the tag, and its entry or that the
// net backend serves it.
type iocpSlot struct {
	tag Tag
	ent int32 // -1: viaNet
}

// iocpEnt is the Go side of a slab entry. rop and sop are the operations
// in flight (0: none); their buffers stay referenced here until their
// packets arrive, live or orphaned.
type iocpEnt struct {
	tag      Tag
	fd       int
	live     bool // tag is added; false: an orphan, or free
	stream   bool
	rop, sop Op
	rCancel  bool     // Cancel asked for the receive side
	sCancel  bool     // and for the send side
	rbuf     []byte   // a receive's buffer; nil: into the Provider's
	sbufs    [][]byte // a send's buffers
	sdone    int      // bytes of sbufs sent
	stotal   int      // bytes of sbufs
	acc      int      // the socket an AcceptEx in flight accepts into
}

func openIOCP(p Provider) (*iocpBackend, error) {
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		return nil, os.NewSyscallError("CreateIoCompletionPort", err)
	}
	b := &iocpBackend{port: port, prov: p, evs: make([]overlappedEntry, 128)}
	if err := b.slab.open(); err != nil {
		windows.CloseHandle(port)
		return nil, os.NewSyscallError("VirtualAlloc", err)
	}
	return b, nil
}

func (b *iocpBackend) Kind() Kind { return IOCP }

func (b *iocpBackend) Traits() Traits { return 0 }

// slot returns tag's slot, or nil if tag is not added.
func (b *iocpBackend) slot(tag Tag) *iocpSlot {
	s := int(tag.Slot())
	if s >= len(b.slots) || b.slots[s].tag != tag || tag == 0 {
		return nil
	}
	return &b.slots[s]
}

// Add associates fd with the port, or, if another port has it, hands tag
// to the net backend.
func (b *iocpBackend) Add(fd int, tag Tag, stream bool) error {
	if fd < 0 {
		return os.NewSyscallError("iocp backend add", syscall.EBADF)
	}
	s := int(tag.Slot())
	for s >= len(b.slots) {
		b.slots = append(b.slots, iocpSlot{})
	}
	if err := associate(b.port, fd); err != nil {
		if err := b.net().Add(fd, tag, stream); err != nil {
			return err
		}
		b.slots[s] = iocpSlot{tag: tag, ent: -1}
		return nil
	}
	i, err := b.slab.take()
	if err != nil {
		return os.NewSyscallError("iocp backend add", err)
	}
	for int(i) >= len(b.ents) {
		b.ents = append(b.ents, iocpEnt{})
	}
	b.ents[i] = iocpEnt{tag: tag, fd: fd, live: true, stream: stream, acc: -1}
	b.slots[s] = iocpSlot{tag: tag, ent: i}
	return nil
}

// Remove forgets tag. Its operations in flight are cancelled; the entry
// stays the kernel's, an orphan, until their packets arrive.
func (b *iocpBackend) Remove(tag Tag) error {
	sl := b.slot(tag)
	if sl == nil {
		return nil
	}
	i := sl.ent
	*sl = iocpSlot{}
	if i < 0 {
		return b.nb.Remove(tag)
	}
	e := &b.ents[i]
	e.live = false
	if e.rop == 0 && e.sop == 0 {
		b.free(i)
		return nil
	}
	sock.CancelIoEx(e.fd, 0)
	return nil
}

// free hands entry i back; nothing of it is in flight.
func (b *iocpBackend) free(i int32) {
	b.ents[i] = iocpEnt{acc: -1}
	b.slab.put(i)
}

// Wake posts a packet under wakeKey, unless one is posted and not yet
// seen. Safe from any goroutine.
func (b *iocpBackend) Wake() error {
	if !b.woken.CompareAndSwap(false, true) {
		return nil
	}
	if err := windows.PostQueuedCompletionStatus(b.port, 0, wakeKey, nil); err != nil {
		b.woken.Store(false)
		return os.NewSyscallError("PostQueuedCompletionStatus", err)
	}
	return nil
}
