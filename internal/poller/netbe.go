package poller

import (
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
)

// netBackend is the fallback backend: package net behind the completion
// contract, for any OS Go runs on. Each operation is a goroutine doing
// the blocking call (Read, Write, Accept, ReadFrom) on a net.Conn,
// net.Listener or net.PacketConn, which posts its result and wakes the
// loop; the loop turns results into completions in Wait. The runtime's
// own poller does the waiting, so the backend works wherever package
// net does, at the price of a goroutine switch per operation: it is the
// portable and the reference path, not the fast one.
//
// A descriptor handed to Add is wrapped at once by a duplicate that
// package net owns (netbe_unix.go), so the caller's descriptor stays the
// caller's, and the backend's own descriptors exist exactly while the
// tag does. Where package net cannot wrap a
// descriptor (Windows, WebAssembly) Add fails with an error wrapping
// errors.ErrUnsupported.
//
// Cancel sets a deadline in the past on the operation's direction, which
// makes the blocked call return, and waits for the worker: its result is
// posted when Cancel returns. A call that had already moved bytes
// completes with them; one that had not gets a last non-blocking
// attempt (netbe_unix.go). Remove closes the wrapper, which ends every call
// in flight, and waits for their goroutines, so no goroutine touches an
// operation's buffers after Remove returns.
type netBackend struct {
	prov    Provider
	ents    []*netEntry // by tag slot
	posted  netPosted   // results from the workers
	sig     chan struct{}
	timer   *time.Timer
	results []netResult // the batch being handled
	// notify, if set, is called by Wake too: the IOCP backend that
	// serves some of its tags this way waits on its port, not on sig.
	notify func()
}

// netEntry is one added descriptor.
type netEntry struct {
	tag    Tag
	stream bool
	w      netWrap        // package net's view of fd, made by Add
	wErr   syscall.Errno  // why w could not be made
	recv   *netOp         // receive side in flight
	send   *netOp         // send side in flight
	spill  []byte         // received bytes not yet delivered (nil-buffer receives)
	rDL    bool           // a read deadline is set (by a Cancel)
	wDL    bool           // a write deadline is set
	rwg    sync.WaitGroup // the receive side's worker
	swg    sync.WaitGroup // the send side's worker
}

// wait waits for e's workers, which end at once once e.w is closed.
func (e *netEntry) wait() {
	e.rwg.Wait()
	e.swg.Wait()
}

// netOp is an operation in flight, owned by its worker until it posts.
type netOp struct {
	op   Op
	buf  []byte   // a receive's buffer: the caller's, or scratch
	own  bool     // buf is scratch (a nil-buffer receive)
	bufs [][]byte // a send's
}

// netResult is what a worker posts: its op's outcome.
type netResult struct {
	tag  Tag
	op   *netOp
	n    int
	err  syscall.Errno
	fd   int      // an accepted descriptor (-1 if none)
	from net.Addr // a datagram's source, an accepted connection's peer
	// peer and sa are the same, when a last attempt's system call
	// reported them (netbe_unix.go).
	peer netip.AddrPort
	sa   Sockaddr
}

// netPosted is the mailbox between workers and the loop.
type netPosted struct {
	mu   sync.Mutex
	list []netResult
}

func (p *netPosted) put(r netResult) {
	p.mu.Lock()
	p.list = append(p.list, r)
	p.mu.Unlock()
}

// take moves the posted results into dst (emptied first) and returns it.
func (p *netPosted) take(dst []netResult) []netResult {
	p.mu.Lock()
	dst = append(dst[:0], p.list...)
	clear(p.list)
	p.list = p.list[:0]
	p.mu.Unlock()
	return dst
}

// netScratch is the size of the buffer a nil-buffer receive reads into
// before the Provider's space is known. It is taken only once data is
// there (waitReadable) and given back at delivery; 64 KiB streams at
// 0.75-0.87x std net in galebench where 16 KiB gave 0.45-0.50x.
const netScratch = 64 << 10

var scratchPool = sync.Pool{New: func() any { b := make([]byte, netScratch); return &b }}

func openNet(p Provider) (Backend, error) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &netBackend{prov: p, sig: make(chan struct{}, 1), timer: t}, nil
}

func (b *netBackend) Kind() Kind { return Net }

func (b *netBackend) Traits() Traits { return 0 }

func (b *netBackend) entry(tag Tag) *netEntry {
	s := int(tag.Slot())
	if s >= len(b.ents) || b.ents[s] == nil || b.ents[s].tag != tag {
		return nil
	}
	return b.ents[s]
}

func (b *netBackend) Add(fd int, tag Tag, stream bool) error {
	if fd < 0 {
		return os.NewSyscallError("net backend add", syscall.EBADF)
	}
	if err := canWrap(); err != nil {
		return err
	}
	s := int(tag.Slot())
	for s >= len(b.ents) {
		b.ents = append(b.ents, nil)
	}
	e := &netEntry{tag: tag, stream: stream}
	e.w, e.wErr = wrapFD(fd, stream) // a failure is each operation's error
	b.ents[s] = e
	return nil
}

func (b *netBackend) Remove(tag Tag) error {
	e := b.entry(tag)
	if e == nil {
		return nil
	}
	b.ents[tag.Slot()] = nil
	e.w.close()
	e.wait()
	e.w.release()
	return nil
}

func (b *netBackend) Wake() error {
	select {
	case b.sig <- struct{}{}:
	default:
	}
	if b.notify != nil {
		b.notify()
	}
	return nil
}

func (b *netBackend) Close() error {
	for _, e := range b.ents {
		if e != nil {
			e.w.close()
			e.wait()
			e.w.release()
		}
	}
	b.ents = nil
	for _, r := range b.posted.take(nil) {
		if r.fd >= 0 {
			closeFD(r.fd)
		}
	}
	return nil
}
