package engine

import "github.com/galeio/gale/internal/loop"

// Backend selects the kernel interface of the event loops. The
// GALE_BACKEND environment variable (auto, epoll, io_uring, kqueue, net)
// overrides it for the whole process, which lets a deployment or a test
// run switch without a rebuild. Package aio has the same type.
type Backend = loop.Backend

const (
	// Auto uses io_uring where this kernel and its configuration allow it
	// (Linux 6.3 or later, io_uring not disabled by sysctl or a seccomp
	// filter, enough locked memory and descriptors), epoll otherwise on
	// Linux, kqueue on the BSDs and macOS, and Net elsewhere.
	Auto = loop.Auto
	// Epoll uses epoll(7), with completions emulated by non-blocking
	// system calls.
	Epoll = loop.Epoll
	// IOURing uses io_uring(7): multishot accept and receive from a
	// provided-buffer ring, batched submission. Opening fails where it is
	// unavailable.
	IOURing = loop.IOURing
	// Kqueue uses kqueue(2) (BSD, macOS).
	Kqueue = loop.Kqueue
	// Net is the portable fallback: package net's blocking calls, one
	// goroutine per operation in flight, behind the same completions.
	// It works on any OS with package net (Auto picks it where there is
	// no native backend) and is slower than the native ones; it needs
	// Unix descriptors today, so on Windows and WebAssembly opening
	// works but registering a connection fails with ErrUnsupported
	// (ARCHITECTURE.md, "Platforms").
	Net = loop.Net
)
