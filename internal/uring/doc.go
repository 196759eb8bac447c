// Package uring is gale's io_uring ring layer: setup with feature probing,
// the submission and completion queues in shared memory with the ordering
// the kernel expects, batched submission, provided-buffer rings, registered
// files and ring descriptors, and teardown. It is written directly over
// golang.org/x/sys/unix (see io_uring(7), io_uring_setup(2),
// io_uring_enter(2) and io_uring_register(2)); internal/poller builds the
// io_uring backend on it.
//
// # Concurrency
//
// A Ring belongs to one goroutine, locked to its OS thread with
// runtime.LockOSThread for as long as the ring is enabled: a ring set up
// with IORING_SETUP_SINGLE_ISSUER rejects submissions from any other
// thread (EEXIST), and with IORING_SETUP_DEFER_TASKRUN completions are
// only posted while that thread waits in io_uring_enter(2). None of the
// methods are safe for concurrent use.
//
// # Memory
//
// The rings, the submission queue entries and provided-buffer rings live
// in memory mapped from the kernel or with mmap(2), never in the Go heap.
// An SQE's user_data is an opaque 64-bit value chosen by the caller;
// internal/poller stores a slot index and a generation there, never a Go
// pointer. Buffers whose addresses an SQE carries must stay referenced by
// the caller until the operation's last completion. BufRing.Trim gives a
// provided-buffer ring's pages back while its ring is Settled.
//
// # Errors
//
// Functions return the raw errno wrapped in *os.SyscallError with the
// system call's name. Setup reports why io_uring cannot be used (see
// ErrUnavailable) so that callers can fall back to epoll.
//
// # Platforms
//
// Linux only; on other systems the package is empty.
package uring
