package aio

import "github.com/galeio/gale/internal/loop"

// Backend selects the kernel interface of the event loops. The
// GALE_BACKEND environment variable (auto, epoll, io_uring, kqueue, net)
// overrides it for the whole process, which lets a deployment or a test
// run switch without a rebuild. Package engine has the same type.
type Backend = loop.Backend

const (
	// Auto uses epoll on Linux, kqueue on the BSDs and macOS, and Net
	// elsewhere. (For
	// aio, io_uring streams and ping-pongs level with epoll but is about
	// 10 % slower with thousands of busy connections, so Auto does not
	// pick it; package engine's Auto does. See README's figures.)
	Auto = loop.Auto
	// Epoll uses epoll(7), with completions emulated by non-blocking
	// system calls.
	Epoll = loop.Epoll
	// IOURing uses io_uring(7) (Linux 6.3 or later): reads and writes are
	// the kernel's asynchronous operations. Opening fails where io_uring
	// is unavailable (disabled by sysctl or a seccomp filter, or short of
	// locked memory or descriptors).
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
