package poller

import (
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/uring"
	"golang.org/x/sys/unix"
)

// uringBackend implements Backend over io_uring: operations are submitted
// to the kernel and completed by it, with no readiness step.
//
//   - One ring per loop. The ring is set up by Open on any goroutine,
//     disabled; the first call on the loop goroutine (bind) locks that
//     goroutine to its thread and enables the ring, so the thread is its
//     single issuer (IORING_SETUP_SINGLE_ISSUER) and runs its deferred
//     completions (IORING_SETUP_DEFER_TASKRUN) when it waits.
//   - A nil-buffer receive is a multishot receive (Linux 6.0) from a
//     provided-buffer ring shared by the loop's connections, consumed
//     incrementally where the kernel can (Linux 6.12): one submission
//     serves every message until the owner stops reading, or, where the
//     kernel takes a byte limit (Linux 6.17), until it brought recvLimit
//     bytes, and it is armed again only while the owner reads. A receive
//     with a buffer is a plain receive into it.
//   - An accept is a multishot accept (Linux 5.19).
//   - A send is IORING_OP_SEND for one buffer and IORING_OP_SENDMSG for
//     several, with MSG_WAITALL on streams; a short completion is
//     resubmitted for the rest. With SetZeroCopy, large stream sends are
//     their zero-copy forms (uring_zc_linux.go).
//   - RecvFrom waits with IORING_OP_POLL_ADD and then makes the system
//     call.
//   - Wake writes an eventfd that the ring always has a read pending on.
//
// user_data carries the tag's slot, 24 bits of its generation and the
// kind of operation (ud), never a Go pointer. An entry's address fields
// do point into Go memory (a receive's or send's buffer, a sendmsg's
// msghdr): the tag's state, or an orphan record once the tag is removed,
// keeps that memory referenced until the operation's last completion
// (see "Memory the kernel sees" in poller.go).
type uringBackend struct {
	r      *uring.Ring
	br     *uring.BufRing
	prov   Provider
	direct bool // prov is Transient: lend ring buffers to callbacks
	// mlim is the byte limit a multishot receive is armed with (optlen,
	// Linux 6.17; see recvLimit), 0 where the kernel takes none.
	mlim    uint32
	fds     urTable
	bound   bool
	unbound bool // a ring any thread drives (HandOff): the loop is not locked
	closing bool

	wakefd  sock.FD // the eventfd Wake writes, from any goroutine (see epoll.wakefd)
	wakeBuf []byte  // eventfd reads land here (anonymous mapping)
	wakeArm bool

	backlog []uring.SQE // entries prepared while the ring was full, oldest first (uring_submit_linux.go)
	err     error       // the failure that ended the backend, returned by every Wait

	inflight int                // submitted operations whose last completion is pending
	orphans  map[uint64]*orphan // operations of removed tags, keeping their buffers
	bufOff   []int              // per provided buffer: bytes the kernel filled so far (incremental)
	publish  bool               // buffers were returned to the ring since the last Publish

	// completions: later holds receives served at delivery (serveLater):
	// from spilled data, or a cancelled one's last attempt.
	completions
	idle    []Tag               // multishots whose owner may have stopped: checked at batch end
	starved []Tag               // multishot receives ended by ENOBUFS: re-armed at batch end
	iov     []unix.Iovec        // scratch of the last attempt at cancelled sends
	faults  map[uint64]injected // tests: injected failures by user_data (uring_fault_linux.go)
	spares  [][]byte            // emptied spill arrays, for the next spill (emptySpill)
	ios     []*urIO             // the operations' Go memory, by urState.io - 1 (uring_io_linux.go)
	ioFree  []uint32            // urState.io values of the records no tag holds
	rsa     unix.RawSockaddrAny // an accepted peer's address, read on the loop goroutine

	// spareCap is the spares' total capacity, at most spareMax: twice
	// the buffer ring's size.
	spareCap, spareMax int

	trim bufTrim // giving the provided buffers' pages back once idle (uring_trim_linux.go)

	zcMin             int // stream sends of at least this many bytes are zero-copy; 0 none
	zcSends, zcCopied int // zero-copy sends made, and those the kernel copied after all
}

// Ring sizes: a submission queue deep enough for a busy iteration, and a
// completion queue four times as deep, so that multishot bursts rarely
// take the kernel's overflow path (which allocates, iouring.md §3.4).
const (
	ringEntries = 1024
	ringCQ      = 8192
	bufGroup    = 1
)

// Provided buffers: with incremental consumption small messages pack into
// a buffer one after another, so a few large buffers serve many
// connections; without it each completion takes a whole buffer.
var bufShapes = [2]struct{ count, size int }{
	{64, 32 << 10},  // incremental
	{256, 16 << 10}, // whole buffers
}

// openURing returns the io_uring backend, or an error wrapping
// uring.ErrUnavailable where io_uring cannot be used.
func openURing(p Provider) (Backend, error) {
	b, err := newURing(p, ringEntries)
	if err != nil {
		return nil, err // not a nil *uringBackend in a non-nil Backend
	}
	return b, nil
}

// newURing is openURing with a submission queue of entries (tests make
// it small, to fill it).
func newURing(p Provider, entries uint32) (*uringBackend, error) {
	unbound := handsOff(p) && !transient(p)
	r, err := uring.Setup(uring.Config{Entries: entries, CQEntries: ringCQ, Unbound: unbound})
	if err != nil {
		return nil, err
	}
	b := &uringBackend{r: r, prov: p, unbound: unbound}
	b.wakefd.Init(-1)
	b.direct = transient(p)
	if b.direct && uring.RecvLimit() {
		b.mlim = recvLimit
	}
	if err := b.init(); err != nil {
		b.teardown()
		return nil, err
	}
	return b, nil
}

func (b *uringBackend) init() error {
	for _, op := range []uint8{uring.OpRecv, uring.OpSend, uring.OpSendmsg, uring.OpAccept,
		uring.OpRead, uring.OpPollAdd, uring.OpAsyncCancel} {
		if !b.r.Supports(op) {
			return unavailable("opcode %d not supported", op)
		}
	}
	shape := bufShapes[0]
	br, err := b.r.RegisterBufRing(bufGroup, shape.count, b.bufSize(shape.size), true)
	if err == nil && !br.Inc() {
		br.Close()
		shape = bufShapes[1]
		br, err = b.r.RegisterBufRing(bufGroup, shape.count, b.bufSize(shape.size), false)
	}
	if err != nil {
		return unavailable("provided-buffer ring: %v", err)
	}
	b.br = br
	b.bufOff = make([]int, shape.count)
	b.spareMax = 2 * shape.count * b.bufSize(shape.size)
	if b.wakeBuf, err = unix.Mmap(-1, 0, 8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS); err != nil {
		return os.NewSyscallError("mmap", err)
	}
	wakefd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return os.NewSyscallError("eventfd", err)
	}
	b.wakefd.Init(wakefd)
	return nil
}

// bufSize caps the provided buffers at the size of a Transient
// provider's own buffer: a receive lent to its owner then brings no more
// than the owner's buffer would have held (engine's ReadBufferSize).
func (b *uringBackend) bufSize(size int) int {
	if b.direct {
		if buf, _ := b.prov.Provide(); len(buf) > 0 {
			return min(size, len(buf))
		}
	}
	return size
}

// bind makes the calling goroutine the ring's owner: it stays locked to
// its thread until Close, unless the ring is unbound. A ring that cannot
// be enabled fails the backend (see fail).
func (b *uringBackend) bind() {
	b.bound = true
	if b.unbound {
		b.armWake()
		return
	}
	runtime.LockOSThread()
	if err := b.r.Enable(); err != nil {
		b.fail(err)
		return
	}
	// A registered ring descriptor spares each io_uring_enter a file
	// lookup; it is an optimisation, so a failure is not fatal.
	_ = b.r.RegisterRingFD()
	b.armWake()
}

func (b *uringBackend) armWake() {
	e := b.sqe(makeUD(wakeTag, kWake))
	e.Opcode, e.FD = uring.OpRead, int32(b.wakefd.Sysfd())
	e.Addr, e.Len = addrOf(b.wakeBuf), 8
	b.wakeArm = true
}

// cancel asks the kernel to end the operation named data; its last
// completion follows.
func (b *uringBackend) cancel(data ud) {
	e := b.sqe(makeUD(wakeTag, kCancel))
	e.Opcode, e.Addr = uring.OpAsyncCancel, uint64(data)
	e.OpFlags = uring.CancelAll
}

func (b *uringBackend) Kind() Kind { return IOURing }

// Traits: sends wait for the next submission; a Transient owner's
// nil-buffer receives are multishot, which read ahead (recvKind).
func (b *uringBackend) Traits() Traits {
	if b.direct {
		return ReadsAhead | DefersSends
	}
	return DefersSends
}

func (b *uringBackend) Add(fd int, tag Tag, stream bool) error {
	if fd < 0 {
		return os.NewSyscallError("io_uring add", unix.EBADF)
	}
	st := b.fds.grow(int(tag.Slot()))
	if st.rk != 0 || st.sk != 0 || st.io != 0 { // Remove ends them and gives the record back
		panic("poller: slot reused with operations in flight")
	}
	*st = urState{fd: int32(fd), tag: tag}
	st.bits.set(stStream, stream)
	return nil
}

func (b *uringBackend) state(tag Tag) *urState {
	st := b.fds.at(int(tag.Slot()))
	if st == nil || st.tag != tag {
		return nil
	}
	return st
}

func (b *uringBackend) Wake() error {
	fd, ok := b.wakefd.Acquire()
	if !ok {
		return nil // closed: the loop is gone
	}
	_, err := unix.Write(fd, wakeValue[:])
	b.wakefd.Release()
	if err == unix.EAGAIN {
		return nil
	}
	return err
}

func (b *uringBackend) Wait(timeout time.Duration, fn func(*Completion)) error {
	if !b.bound {
		b.bind()
	}
	if b.err == nil {
		b.flush()
	}
	if b.err != nil {
		return b.err
	}
	if b.pending() || len(b.backlog) > 0 {
		timeout = 0 // completions to deliver, or a backlog the kernel refused: no blocking
	}
	b.flushBufs()
	if timeout != 0 {
		timeout = b.idleTrim(timeout)
	}
	if err := b.r.Wait(timeout); err != nil {
		b.fail(err)
		return err
	}
	b.drain(fn, b.serveLater)
	b.reap(fn)
	b.drain(fn, b.serveLater)
	b.batchEnd()
	return nil
}

// reap handles every completion in the queue.
func (b *uringBackend) reap(fn func(*Completion)) {
	for {
		head, tail := b.r.Peek()
		n := len(head) + len(tail)
		if n == 0 {
			return
		}
		for i := range head {
			b.handle(head[i], fn)
		}
		for i := range tail {
			b.handle(tail[i], fn)
		}
		b.r.Advance(uint32(n))
	}
}

// handle routes one completion (a copy: callbacks may submit, and the
// entry is released only after the batch).
func (b *uringBackend) handle(c uring.CQE, fn func(*Completion)) {
	if len(b.faults) > 0 {
		b.faulted(&c)
	}
	if c.Flags&uring.CQEFMore == 0 {
		b.inflight--
	}
	data := ud(c.UserData)
	switch data.kind() {
	case kWake:
		b.wakeArm = false
		if !b.closing {
			b.armWake()
		}
		return
	case kCancel:
		return
	}
	st := b.fds.at(int(data.slot()))
	if st == nil || st.tag == 0 || !data.matches(st.tag) {
		b.orphaned(data, c)
		return
	}
	switch {
	case data.recvSide():
		if st.rk != data.kind() {
			b.orphaned(data, c)
			return
		}
		b.recvDone(st, c, fn)
	default:
		if st.sk != data.kind() {
			b.orphaned(data, c)
			return
		}
		b.sendDone(st, c, fn)
	}
}

// serveLater serves tag's receive at delivery (serveRecv).
func (b *uringBackend) serveLater(tag Tag, fn func(*Completion)) {
	if st := b.state(tag); st != nil {
		b.serveRecv(st, fn)
	}
}

// batchEnd stops the multishots no one reads from and re-arms the
// receives that ran out of provided buffers, once this batch has returned
// its buffers to the ring.
func (b *uringBackend) batchEnd() {
	b.flushBufs()
	for _, tag := range b.idle {
		if st := b.state(tag); st != nil {
			b.stopIdle(st)
		}
	}
	b.idle = b.idle[:0]
	starved := b.starved
	b.starved = b.starved[len(b.starved):]
	for _, tag := range starved {
		if st := b.state(tag); st != nil {
			b.kickRecv(st)
		}
	}
	if len(b.starved) == 0 {
		b.starved = b.starved[:0]
	}
}

func (b *uringBackend) flushBufs() {
	if b.publish {
		b.br.Publish()
		b.publish = false
	}
}

// Close cancels every operation and waits, briefly, for their last
// completions, so that no buffer is written after it returns; then it
// releases the ring.
func (b *uringBackend) Close() error {
	b.closing = true
	if b.bound {
		for tag := range b.liveTags() {
			b.Remove(tag)
		}
		if b.wakeArm {
			b.cancel(makeUD(wakeTag, kWake))
		}
		deadline := time.Now().Add(time.Second)
		for b.inflight > 0 && time.Now().Before(deadline) {
			b.flush()
			if err := b.r.Wait(10 * time.Millisecond); err != nil {
				break
			}
			b.reap(func(c *Completion) {})
		}
	}
	for _, c := range b.ready {
		if c.Op == OpAccept && c.Err == 0 {
			sock.Close(c.N)
		}
	}
	if b.inflight > 0 && len(b.orphans) > 0 {
		keepForever(b.orphans)
	}
	b.ready, b.orphans = nil, nil
	err := b.teardown()
	if b.bound {
		b.bound = false
		if !b.unbound {
			runtime.UnlockOSThread()
		}
	}
	return err
}

func (b *uringBackend) teardown() error {
	if b.br != nil {
		b.br.Close()
		b.br = nil
	}
	err := b.r.Close()
	if b.wakefd.Sysfd() >= 0 {
		b.wakefd.Close() // after the last Wake that is writing to it
	}
	if b.wakeBuf != nil {
		unix.Munmap(b.wakeBuf)
		b.wakeBuf = nil
	}
	return err
}

// stuck holds the orphans of backends that closed before the kernel gave
// their memory back (a zero-copy send whose connection still holds its
// pages, say): the memory stays allocated, so nothing else is ever put
// where the kernel may still read or write. A leak, bounded by such
// operations, in exchange for never corrupting memory.
var stuck struct {
	sync.Mutex
	orphans []map[uint64]*orphan
}

func keepForever(o map[uint64]*orphan) {
	stuck.Lock()
	stuck.orphans = append(stuck.orphans, o)
	stuck.Unlock()
}
