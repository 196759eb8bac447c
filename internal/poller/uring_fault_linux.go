package poller

import (
	"syscall"

	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/uring"
)

// Fault injection (tests only, see sock.SetFault). On io_uring the kernel
// makes the system calls, so a failure is injected where an operation is
// prepared: its entry becomes a no-op under the same user_data, and the
// no-op's completion is rewritten with the injected errno before it is
// handled. The operation thus fails without touching the socket (no byte
// is moved, no connection taken), and the completion path (resubmission,
// a multishot's end, the owner's error) runs as for a real failure.
// Outside such tests this costs one atomic load per prepared operation.

// injectFault turns e, just prepared for op on fd, into a no-op if a
// test injects a failure for it.
func (b *uringBackend) injectFault(e *uring.SQE, op sock.FaultOp, fd int) {
	errno := sock.Fault(op, fd)
	if errno == 0 {
		return
	}
	*e = uring.SQE{Opcode: uring.OpNop, UserData: e.UserData}
	if b.faults == nil {
		b.faults = make(map[uint64]syscall.Errno)
	}
	b.faults[e.UserData] = errno
}

// faulted gives the completion of an injected no-op its errno. A kind of
// operation has at most one kernel operation in flight per tag, so the
// user_data names it alone.
func (b *uringBackend) faulted(c *uring.CQE) {
	if errno, ok := b.faults[c.UserData]; ok {
		delete(b.faults, c.UserData)
		c.Res, c.Flags = -int32(errno), 0
	}
}
