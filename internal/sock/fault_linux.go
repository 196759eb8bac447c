package sock

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// FaultOp names a system call into which a test can inject failures.
type FaultOp uint8

// The calls Fault is consulted for. Writev counts as FaultWrite.
const (
	FaultRead FaultOp = 1 + iota
	FaultWrite
	FaultAccept
)

// FaultFunc decides whether the call op on fd fails: it returns the errno
// to fail with, or 0 to let the call through. It is called on the loop
// goroutines (and on the goroutines of engine's direct writes), so it must
// be safe for concurrent use.
type FaultFunc func(op FaultOp, fd int) syscall.Errno

// fault is the installed FaultFunc, nil outside fault-injection tests.
// Read, Write, Writev and Accept pay one atomic load for it; the io_uring
// backend consults it when it prepares a receive, send or accept.
// (A plain unsafe.Pointer: the generic atomic.Pointer's Load costs Fault
// its inlining.)
var fault unsafe.Pointer // *FaultFunc

// SetFault installs f (nil removes the hook) and returns the function that
// restores the previous one. For tests only (internal/testkit/faulttest): gale's
// own code never sets it.
func SetFault(f FaultFunc) (restore func()) {
	var p *FaultFunc
	if f != nil {
		p = &f
	}
	old := atomic.SwapPointer(&fault, unsafe.Pointer(p))
	return func() { atomic.StorePointer(&fault, old) }
}

// Faulty reports whether a test installed a fault hook: one atomic load,
// for callers that guard a call to Fault they keep out of line.
func Faulty() bool { return atomic.LoadPointer(&fault) != nil }

// Fault returns the errno a test injected for op on fd, or 0: the call is
// to be made. An injected failure stands for the whole call: nothing is
// read, written or accepted.
func Fault(op FaultOp, fd int) syscall.Errno {
	if f := atomic.LoadPointer(&fault); f != nil {
		return (*(*FaultFunc)(f))(op, fd)
	}
	return 0
}
