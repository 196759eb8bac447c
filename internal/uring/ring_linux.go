package uring

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnavailable is wrapped by Setup's error when io_uring cannot be used
// here: the kernel lacks it or a feature gale needs, it is disabled by
// sysctl, or a seccomp filter or a resource limit refuses it. The message
// says which.
var ErrUnavailable = errors.New("io_uring unavailable")

// Required are the feature bits gale's backend depends on: one mapping for
// both rings, no completion ever dropped, timed waits, and
// IORING_FEAT_REG_REG_RING, which marks Linux 6.3, where everything the
// backend submits (multishot accept and receive, provided-buffer rings,
// SINGLE_ISSUER, DEFER_TASKRUN) exists.
const Required = FeatSingleMmap | FeatNoDrop | FeatExtArg | FeatRegRegRing

// Config chooses a ring's sizes.
type Config struct {
	Entries   uint32 // submission queue entries (rounded up to a power of 2)
	CQEntries uint32 // completion queue entries; 0 means 4 × Entries
	// Unbound makes a ring any thread may submit to and wait on: no
	// SINGLE_ISSUER or DEFER_TASKRUN, so its owner need not be locked to
	// a thread.
	Unbound bool
}

// Ring is one io_uring instance. See the package documentation for its
// concurrency contract.
type Ring struct {
	fd         int
	enterFD    int    // fd, or its index once registered (RegisterRingFD)
	enterFlags uint32 // enterRegisteredRing once registered
	flags      uint32 // setup flags in effect
	features   uint32
	mem        []byte // the SQ and CQ rings (one mapping: FeatSingleMmap)
	sqeMem     []byte

	sqHead, sqTail, sqFlags *uint32
	sqMask, sqEntries       uint32
	sqes                    []SQE
	sqeTail                 uint32 // next SQE to hand out
	sqeHead                 uint32 // SQEs before it were published

	cqHead, cqTail *uint32
	cqMask         uint32
	cqes           []CQE

	arg getEventsArg
	ts  unix.Timespec
	ops [opLast + 1]bool // the probe's result
}

// flagSets are the setup flags tried in order: the preferred
// single-issuer, deferred-task-run ring (Linux 6.1), then cooperative task
// running (5.19), then none. SINGLE_ISSUER rings start disabled so that
// the thread which enables them (Enable), not the one that made them,
// becomes their only submitter.
var flagSets = []uint32{
	SetupSingleIssuer | SetupDeferTaskrun | SetupTaskrunFlag | SetupRDisabled,
	SetupCoopTaskrun | SetupTaskrunFlag,
	0,
}

// unboundSets are the flags tried for an Unbound ring. Cooperative task
// running still works when the submitting goroutine moves between
// threads: the kernel queues a completion's work on the thread that
// submitted the operation and wakes it if it sleeps (a running thread
// runs it at its next kernel entry, which a Go thread makes often).
var unboundSets = []uint32{SetupCoopTaskrun | SetupTaskrunFlag, 0}

// Setup creates a ring. Errors that mean io_uring cannot be used wrap
// ErrUnavailable.
func Setup(cfg Config) (*Ring, error) {
	if v := hooks.Disabled(); v != 0 {
		return nil, fmt.Errorf("%w: kernel.io_uring_disabled is %d", ErrUnavailable, v)
	}
	if cfg.CQEntries == 0 {
		cfg.CQEntries = 4 * cfg.Entries
	}
	var p params
	var fd int
	sets := flagSets
	if cfg.Unbound {
		sets = unboundSets
	}
	for i, fl := range sets {
		p = params{flags: fl | SetupCQSize | SetupClamp | SetupSubmitAll, cqEntries: cfg.CQEntries}
		var errno unix.Errno
		fd, errno = hooks.Setup(cfg.Entries, unsafe.Pointer(&p))
		if errno == 0 {
			break
		}
		if errno == unix.EINVAL && i < len(sets)-1 {
			continue // an older kernel: try fewer flags
		}
		return nil, setupError(errno)
	}
	r := &Ring{fd: fd, enterFD: fd, flags: p.flags, features: p.features}
	if p.features&Required != Required {
		unix.Close(fd)
		return nil, fmt.Errorf("%w: kernel features %#x lack %#x (Linux 6.3 or later is needed)",
			ErrUnavailable, p.features, Required&^p.features)
	}
	if err := r.mapRings(&p); err != nil {
		r.Close()
		return nil, err
	}
	if err := r.probe(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// setupError explains a failed io_uring_setup(2).
func setupError(errno unix.Errno) error {
	why := ""
	switch errno {
	case unix.ENOSYS:
		why = "the kernel has no io_uring"
	case unix.EPERM:
		why = "not permitted (kernel.io_uring_disabled, or a seccomp filter such as Docker's default)"
	case unix.ENOMEM:
		why = "out of locked memory (RLIMIT_MEMLOCK too small)"
	case unix.EMFILE, unix.ENFILE:
		why = "no descriptor left (open-file limit)"
	default:
		why = "setup failed"
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, why, os.NewSyscallError("io_uring_setup", errno))
}

func (r *Ring) mapRings(p *params) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(CQE{})))
	var err error
	if r.mem, err = mmap(r.fd, offSQRing, max(sqSize, cqSize)); err != nil {
		return err
	}
	if r.sqeMem, err = mmap(r.fd, offSQEs, int(p.sqEntries)*int(unsafe.Sizeof(SQE{}))); err != nil {
		return err
	}
	base := unsafe.Pointer(&r.mem[0])
	r.sqHead = (*uint32)(unsafe.Add(base, p.sqOff.head))
	r.sqTail = (*uint32)(unsafe.Add(base, p.sqOff.tail))
	r.sqFlags = (*uint32)(unsafe.Add(base, p.sqOff.flags))
	r.sqMask = *(*uint32)(unsafe.Add(base, p.sqOff.ringMask))
	r.sqEntries = p.sqEntries
	r.sqes = unsafe.Slice((*SQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	// The SQ array maps ring positions to SQE indexes: the identity, set
	// once, so SQEs are used in ring order.
	array := unsafe.Slice((*uint32)(unsafe.Add(base, p.sqOff.array)), p.sqEntries)
	for i := range array {
		array[i] = uint32(i)
	}
	r.sqeTail = atomic.LoadUint32(r.sqTail)
	r.sqeHead = r.sqeTail
	r.cqHead = (*uint32)(unsafe.Add(base, p.cqOff.head))
	r.cqTail = (*uint32)(unsafe.Add(base, p.cqOff.tail))
	r.cqMask = *(*uint32)(unsafe.Add(base, p.cqOff.ringMask))
	r.cqes = unsafe.Slice((*CQE)(unsafe.Add(base, p.cqOff.cqes)), p.cqEntries)
	return nil
}

// probe records which opcodes the kernel supports.
func (r *Ring) probe() error {
	var pr probe
	if _, err := register(r.fd, regProbe, unsafe.Pointer(&pr), uint32(len(pr.ops))); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	for i := 0; i < int(pr.opsLen) && i < len(pr.ops); i++ {
		if op := pr.ops[i]; int(op.op) < len(r.ops) && op.flags&opSupported != 0 {
			r.ops[op.op] = true
		}
	}
	return nil
}

// Supports reports whether the kernel supports opcode op.
func (r *Ring) Supports(op uint8) bool { return int(op) < len(r.ops) && r.ops[op] }

// Flags returns the setup flags in effect.
func (r *Ring) Flags() uint32 { return r.flags }

// Features returns the kernel's feature bits.
func (r *Ring) Features() uint32 { return r.features }

// FD returns the ring's descriptor.
func (r *Ring) FD() int { return r.fd }

// Enable starts a ring set up disabled (SINGLE_ISSUER rings are), making
// the calling thread its only submitter. Call it on the owner goroutine,
// locked to its thread, before the first submission.
func (r *Ring) Enable() error {
	if r.flags&SetupRDisabled == 0 {
		return nil
	}
	_, err := register(r.fd, regEnableRings, nil, 0)
	return err
}

// RegisterRingFD registers the ring's descriptor with the calling thread
// (Linux 5.18), which spares io_uring_enter(2) a file-table lookup. The
// registration belongs to the thread: call it on the owner goroutine,
// locked to its thread, which must also be the one to Close the ring.
func (r *Ring) RegisterRingFD() error {
	up := rsrcUpdate{offset: ^uint32(0), data: uint64(r.fd)}
	if _, err := register(r.fd, regRingFDs, unsafe.Pointer(&up), 1); err != nil {
		return err
	}
	r.enterFD, r.enterFlags = int(up.offset), enterRegisteredRing
	return nil
}

// unregisterRingFD releases RegisterRingFD's registration: the thread's
// table holds a reference to the ring, which would otherwise stay
// allocated until the thread exits (Go reuses threads), and has 16
// slots (IO_RINGFD_REG_MAX), so a thread that set up rings one after
// another could register no more.
func (r *Ring) unregisterRingFD() {
	if r.enterFlags&enterRegisteredRing == 0 {
		return
	}
	up := rsrcUpdate{offset: uint32(r.enterFD)}
	register(r.fd, unregRingFDs, unsafe.Pointer(&up), 1)
	r.enterFD, r.enterFlags = r.fd, 0
}

// Close unmaps the rings and closes the descriptor. Operations still in
// flight are cancelled by the kernel; buffers they referenced may be
// reused once Close returns. A ring whose descriptor was registered
// (RegisterRingFD) must be closed on that thread: the registration is
// released there.
func (r *Ring) Close() error {
	r.unregisterRingFD()
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
		r.sqeMem, r.sqes = nil, nil
	}
	if r.mem != nil {
		unix.Munmap(r.mem)
		r.mem, r.cqes = nil, nil
	}
	if r.fd < 0 {
		return nil
	}
	fd := r.fd
	r.fd = -1
	if err := unix.Close(fd); err != nil {
		return os.NewSyscallError("close", err)
	}
	return nil
}
