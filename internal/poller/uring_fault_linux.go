package poller

import (
	"syscall"

	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/uring"
)

// Fault injection (tests only, see sock.SetFault). On io_uring the kernel
// makes the system calls, so failures are injected where the backend
// meets them, in a way that moves no byte and takes no connection:
//
//   - An operation being prepared becomes a no-op under the same
//     user_data; the no-op's completion gets the injected errno.
//   - A multishot receive or accept already running is consulted at each
//     of its completions (each stands for one call); when a failure is
//     injected, the multishot is cancelled, and the completion that ends
//     it gets the errno, as if the kernel had ended it with that error.
//     Completions that arrive before it are handled as they are.
//
// The completion path (resubmission, the end of a multishot, the owner's
// error) then runs as for a real failure. Outside such tests this costs
// one atomic load (sock.Faulty) per prepared operation and per multishot
// completion.

// injected is a failure waiting for the completion it rewrites.
type injected struct {
	errno syscall.Errno
	nop   bool // the completion is a no-op's; else a cancelled multishot's
}

// injectFault turns e, just prepared for op on fd, into a no-op if a
// test injects a failure for it. Callers check sock.Faulty first.
func (b *uringBackend) injectFault(e *uring.SQE, op sock.FaultOp, fd int) {
	errno := sock.Fault(op, fd)
	if errno == 0 {
		return
	}
	*e = uring.SQE{Opcode: uring.OpNop, UserData: e.UserData}
	b.addFault(e.UserData, injected{errno: errno, nop: true})
}

// faultRunning consults the hook for a completion of st's running
// multishot (data), and ends the multishot if a failure is injected.
// Callers check sock.Faulty first.
func (b *uringBackend) faultRunning(st *urState, data ud) {
	if st.rstop {
		return // being stopped already
	}
	op := sock.FaultRead
	if data.kind() == kAccept {
		op = sock.FaultAccept
	}
	errno := sock.Fault(op, int(st.fd))
	if errno == 0 {
		return
	}
	b.addFault(uint64(data), injected{errno: errno})
	st.rstop = true
	b.cancel(data)
}

func (b *uringBackend) addFault(data uint64, f injected) {
	if b.faults == nil {
		b.faults = make(map[uint64]injected)
	}
	b.faults[data] = f
}

// faulted gives the completion that ends an operation with an injected
// failure its errno. A kind of operation has at most one kernel
// operation in flight per tag, so the user_data names it alone. A
// multishot that ended with data or end of file anyway keeps them.
func (b *uringBackend) faulted(c *uring.CQE) {
	f, ok := b.faults[c.UserData]
	if !ok || c.Flags&uring.CQEFMore != 0 {
		return
	}
	delete(b.faults, c.UserData)
	if f.nop || c.Res < 0 {
		c.Res, c.Flags = -int32(f.errno), 0
	}
}
