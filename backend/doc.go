// Package backend names the kernel interfaces gale's event loops run on.
// One type, [Kind], serves every package that has loops:
// aio.Config.Backend, engine.Options.Backend, netconn.ListenConfig.Backend
// and netconn.Dialer.Backend, and, through their engine options, httpd
// and websocket.
//
// # What Auto picks
//
// [Auto], the zero value, is decided in one place from what the loops'
// owner does with a completion, never from which package asks:
//
//	owner                        Linux                 BSD, macOS  Windows         elsewhere
//	engine (callbacks)           io_uring, else epoll  kqueue      IOCP, else Net  Net
//	websocket on its own engine  io_uring, else epoll  kqueue      IOCP, else Net  Net
//	httpd (handler goroutines)   epoll                 kqueue      Net             Net
//	websocket upgraded on httpd  httpd's: epoll        kqueue      httpd's: Net    Net
//	netconn (parked Read/Write)  epoll                 kqueue      Net             Net
//	aio (WaitIO)                 epoll                 kqueue      Net             Net
//
// websocket's own engine is websocket.NewEngine's, or the shared one its
// Dialer and net/http upgrades use when Options.Engine is nil.
//
// io_uring wins where the owner finishes its work on the loop goroutine
// while a completion's buffer is lent to it: the loop reads the ring's
// buffers in place and submits the sends its callbacks made with the
// system call that waits, so it makes far fewer system calls per message
// than epoll. Where every completion or request crosses to another
// goroutine (a parked Read, WaitIO, a handler), io_uring's loop, which
// holds its OS thread, pays a wake-up across threads for each crossing,
// and epoll measured faster (docs/bench/figures.md has the figures and
// their commands). "else epoll" means Auto falls back to epoll where
// io_uring cannot be opened: a kernel older than 6.3, io_uring disabled
// by sysctl or a seccomp filter, or too little locked memory.
// The Stats of aio and engine name the backend each loop runs on
// once Auto is resolved.
//
// On Windows IOCP serves the loops whose sockets gale makes or accepts:
// a completion port takes a socket only if no other port has it, and
// package net gives every socket it makes to the Go runtime's port. A
// socket the port cannot take (a dialed connection, an adopted one, a
// listener package net made) is served the Net way inside the IOCP loop.
// So Auto picks IOCP only for engine's loops, whose TCP listeners gale
// makes with Winsock; aio's sockets are its user's net.Conns, httpd's
// come from the user's net.Listener, and netconn's listeners and dials
// are package net's, so they stay on Net.
//
// Asking for a backend by name ([Epoll], [IOURing], [Kqueue], [Net], [IOCP])
// overrides the table; one this platform lacks fails when the loops
// open, with an error matching errors.ErrUnsupported (io_uring where it
// is unavailable: an error saying why).
//
// # The environment
//
// The environment variable GALE_BACKEND (auto, epoll, io_uring, kqueue,
// net, iocp; see [Parse]) overrides every choice in the process, options and
// Auto alike, so that a deployment or a test run switches without a
// rebuild. An unknown name fails when the loops open.
//
// # Limitations
//
//   - GALE_BACKEND is one setting for the whole process: it overrides
//     every engine's, Watcher's and listener's choice alike.
//   - Kqueue builds and vets but runs on no machine of ours yet.
//   - Windows is tested under Wine only (docs/windows.md says what a
//     Windows runner is still to confirm); UDP fails there with an error
//     matching errors.ErrUnsupported. On WebAssembly the loops open on
//     Net, but no connection can be registered: registering fails so.
package backend
