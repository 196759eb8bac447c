// Package aio is gale's proactor: submit asynchronous reads and writes on
// any net.Conn that exposes its descriptor, and collect their completions
// with WaitIO. It keeps the API of github.com/xtaci/gaio v1.2.34 (names,
// signatures and semantics), so a gaio program switches by changing its
// import path:
//
//	import gaio "github.com/galeio/gale/aio"
//
// # Usage
//
// An echo server: one goroutine collects completions and submits the next
// request; a read completion starts a write of the same bytes, a write
// completion starts the next read.
//
//	w, err := aio.NewWatcher()
//	if err != nil { ... }
//	defer w.Close()
//	go func() {
//		for {
//			results, err := w.WaitIO()
//			if err != nil {
//				return // the watcher was closed
//			}
//			for _, res := range results {
//				switch {
//				case res.Error != nil:
//					w.Free(res.Conn)
//				case res.Operation == aio.OpRead:
//					w.Write(nil, res.Conn, res.Buffer[:res.Size])
//				case res.Operation == aio.OpWrite:
//					w.Read(nil, res.Conn, res.Buffer[:cap(res.Buffer)])
//				}
//			}
//		}
//	}()
//	for {
//		conn, err := ln.Accept()
//		if err != nil { ... }
//		w.Read(nil, conn, make([]byte, 4096))
//	}
//
// # Delegation
//
// The first request on a conn delegates it to the watcher: the watcher
// duplicates the descriptor and closes conn. From then on conn is only the
// connection's identity (a map key, OpResult.Conn) and its addresses; its
// own Read, Write, Close and SetDeadline fail. Socket options set before
// delegation stay in force: they belong to the socket, not the descriptor.
// Free closes the socket; Detach hands it back as a new net.Conn. A conn
// object that becomes unreachable while no request is pending is released
// by the garbage collector (see GetGC).
//
// # Buffers
//
// A caller's buffer belongs to the watcher from submission until its
// completion is returned by WaitIO. A read with a nil buffer receives into
// the watcher's swap buffer; that OpResult.Buffer, and the slice WaitIO
// returned, are valid until the next WaitIO call.
//
// # Order and concurrency
//
// Every method may be called from any goroutine. Requests on one conn and
// one direction complete in the order they were submitted (the order of the
// submitting calls); reads and writes, and different conns, are not
// ordered with respect to each other. WaitIO is meant for one consuming
// goroutine: concurrent calls are serialized, and each call ends the
// validity of the results the previous call returned.
//
// # Loops
//
// A Watcher runs Config.Loops event loops, by default one per
// runtime.GOMAXPROCS, each a goroutine that waits for readiness and
// performs every system call for its connections. A connection stays on
// the loop it was given for life, which is what keeps its completions in
// order. More loops serve many connections faster and scale with the
// machine; one loop gives the lowest latency with few connections, as
// nothing crosses between threads (docs/bench has the figures). The
// default favours many connections; set Loops to 1 for few.
//
// # Differences from gaio
//
// Where gaio's behaviour is a trap, gale's differs, deliberately:
//
//   - A nil-buffer read never shrinks silently. gaio falls back to 16 bytes
//     when its swap buffer is full. gale gives every nil-buffer read at
//     least min(BufferSize, 4 KiB) of space; when all of a loop's swap
//     chunks hold data that WaitIO has not released, the read waits until
//     the next WaitIO call releases some.
//   - A slow WaitIO consumer does not stall the other connections. A loop
//     never blocks on delivery: completions queue (at most one per request
//     the caller submitted), writes and reads into caller buffers go on,
//     and timers fire. Only nil-buffer reads wait, for at most
//     Loops × SwapChunks × BufferSize bytes of swap memory (by default
//     16 × 64 KiB = 1 MiB per loop, one loop per GOMAXPROCS) to be
//     released.
//   - Duplicated descriptors are close-on-exec, so child processes never
//     inherit a socket that Free should have closed.
//   - Free of a conn the watcher never saw closes it cleanly; gaio leaked a
//     duplicate descriptor and left the peer connected.
//   - A conn that cannot be delegated (a *tls.Conn, a net.Pipe end, a
//     non-pointer type) fails with ErrUnsupported: synchronously for a nil
//     conn, otherwise as a completion, as gaio reports it, without touching
//     any descriptor. gaio panicked on non-pointer types.
//   - A read into a zero-length buffer completes with Size 0 and no error;
//     gaio reported io.EOF.
//   - Errors are the standard ones. ErrDeadline is os.ErrDeadlineExceeded
//     itself, so ==, errors.Is and net.Error's Timeout all work.
//     ErrUnsupported matches errors.ErrUnsupported; ErrWatcherClosed and
//     ErrConnClosed match net.ErrClosed. Each Err variable is returned as
//     itself, so == comparisons written for gaio keep working. System call
//     failures arrive once wrapped, as *net.OpError around
//     *os.SyscallError, instead of a bare syscall.Errno.
//   - Requests pending on a conn released by Free complete with
//     ErrConnClosed (gaio: io.ErrClosedPipe; errors.Is matches both).
//   - One Watcher may run several loops (Config.Loops) with the same order
//     guarantees; gaio had one.
//   - Additions: Detach; CloseWrite, which shuts a conn's sending side
//     down after the writes submitted before it (a proxy's half-close);
//     Stats; NewWatcherConfig.
//   - Cleanups use runtime.AddCleanup, not finalizers, so a caller's own
//     finalizer on a conn does not collide with the watcher's.
//
// # Errors
//
// Submitting methods return ErrWatcherClosed after Close, ErrEmptyBuffer
// for an empty write or ReadFull buffer, and ErrUnsupported for a nil conn.
// Completions carry nil, io.EOF (the peer closed), ErrDeadline,
// ErrConnClosed, ErrUnsupported, or a *net.OpError.
//
// A system call interrupted (EINTR) or not ready (EAGAIN) is retried by
// the loop and never reaches a completion. Any other failure of a read or
// write, a reset (ECONNRESET, EPIPE) or a lack of kernel memory (ENOMEM,
// ENOBUFS) alike, completes that request with a *net.OpError ("read" or
// "write") around an *os.SyscallError and touches no other connection; the
// connection stays delegated until Free. (On io_uring, ENOBUFS from a
// swap-buffer read means the kernel's provided-buffer ring ran dry, which
// is no error: the read waits for buffers.) Delegation itself can fail
// when the process is out of descriptors: the duplicate of the caller's
// descriptor fails with EMFILE, completing the request with a *net.OpError
// ("dup") and leaving the caller's conn open.
//
// # Limitations
//
// A conn is delegated by duplicating its descriptor, so one without a
// descriptor (a *tls.Conn, a net.Pipe end) fails with [ErrUnsupported],
// as does every conn on WebAssembly, where there are no sockets to
// duplicate, and a UDP conn on Windows. aio moves
// bytes only: it does not accept connections (the caller's listener does,
// as with gaio) and has no TLS; package engine serves both on the same
// loops. Order holds per conn and direction only (see Order and
// concurrency).
//
// # Platforms
//
// On Linux the package's tests run on each of its three backends
// ([Config.Backend]): epoll, io_uring and [backend.Net], the portable one
// on package net (which skips the few that test what it lacks);
// [backend.Auto] is epoll for aio (package backend's table says why). On
// macOS and the BSDs Auto is kqueue, which builds and vets
// (.ci/crossbuild) but no machine of ours runs yet. On Windows Auto is
// the net backend, over gale's own duplicate of the conn's socket
// (WSADuplicateSocket), and the tests run under Wine in CI
// (.ci/wine/run; docs/windows.md says what Wine lacks). On WebAssembly
// the package builds and a Watcher opens, but no conn can be delegated
// (see Limitations).
package aio
