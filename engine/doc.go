// Package engine is gale's reactor: event loops that serve many
// connections with callbacks, in the manner of evio, gnet and nbio, on the
// same loops and backends as package aio.
//
// # Usage
//
// Write a Handler (embed BaseHandler for defaults), create an Engine, give
// it listeners, start it:
//
//	type echo struct{ engine.BaseHandler }
//
//	func (echo) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
//		c.Write(in.Bytes()) // written now, or copied into c's queue
//		in.Discard(in.Len())
//		return engine.None
//	}
//
//	e, err := engine.New(echo{}, engine.Options{})
//	addr, err := e.Listen("tcp", "127.0.0.1:0")
//	err = e.Start()
//	...
//	err = e.Shutdown(ctx)
//
// # Callbacks and concurrency
//
// Callbacks run on the connection's loop goroutine, one at a time per
// loop: a slow callback delays every connection of its loop (unless they
// run on a Pool: see Callbacks on a pool). Every method
// of Engine and Conn is safe from any goroutine. Conn.Execute runs a
// function on the connection's loop, ordered with its other events; Wake
// calls OnData there. A connection that Dial or Adopt returns is on its
// loop already, and its OnOpen may have run: a value its callbacks need
// from the start (Conn.Context) is given with the connection, as
// Adoption.Context to AdoptWith or DialWith, or set in OnOpen.
//
// # Callbacks on a pool
//
// A handler whose callbacks block (a database query, a call to another
// service, a long computation) runs them on a [Pool], given as
// Options.Pool:
//
//	pool := engine.NewPool(engine.PoolOptions{MaxWorkers: 64})
//	e, err := engine.New(h, engine.Options{Pool: pool})
//	...
//	err = e.Shutdown(ctx)
//	pool.Close()
//
// The loop still reads, writes and keeps the timers. Each callback of a
// connection (OnOpen, OnData, OnEOF, OnDeadline, OnLimit, OnDrain,
// OnClose) becomes an event in the connection's queue, which the pool's
// workers run in order, one at a time per connection: a handler keeps its
// per-connection state without a lock, as on the loop, and a connection
// holds at most one worker. The loop never waits for the pool. What
// differs from callbacks on the loop:
//
//   - Buffers: the loop copies the input into the connection's queue;
//     OnData's Inbound is over that copy, valid during the call, and what
//     the callback leaves unconsumed is presented again, before the input
//     that came meanwhile, up to Options.MaxInputBuffer.
//   - Backpressure: while PoolOptions.MaxQueued bytes (64 KiB) wait for
//     OnData, the loop stops reading that connection, and TCP slows its
//     peer; it reads again once a worker takes them. Inbound.PauseRead
//     and ResumeRead act as Conn's, posted to the loop.
//   - Actions: Close closes the connection after the output its callbacks
//     wrote, as Conn.Close does; OnData is not called again, even for
//     input already queued, and OnClose follows. The end of the peer's
//     stream, a deadline, an idle timeout, Shutdown's drain and a limit
//     close the connection after the callback that says goodbye (OnEOF,
//     OnDeadline, OnDrain, OnLimit), which comes after every OnData queued
//     before it: the reply to a peer's last request goes out before the
//     close.
//   - OnClose runs on the pool, after every callback queued before it;
//     the connection is closed by then. Stop and Shutdown wait for it (a
//     callback that never returns holds them); called from a pooled
//     callback, they start the stop and return, as from the loop.
//   - A panic is contained as on the loop: logged, the connection reset,
//     OnClose given the *PanicError; the connection's other queued
//     callbacks are dropped.
//   - A read deadline is met once bytes arrive: the loop does not see
//     what OnData consumes.
//
// OnBoot, OnTick, OnShutdown, Execute's functions and a UDP socket's
// callbacks stay on the loop. A callback crosses from the loop to a worker
// at a cost (a lock, the copy, a wake-up when the worker was idle):
// docs/bench/pool.md in the repository has the figures.
//
// # Buffers
//
// OnData's Inbound, and every slice it returns, is valid only during the
// call: the bytes live in the loop's read buffer, shared by its
// connections. Bytes the callback does not consume are copied aside and
// presented again, before new ones, at the next OnData, so a protocol can
// wait for a whole frame with Peek, Next or ReadUntil without buffering by
// hand, up to Options.MaxInputBuffer bytes (past it the connection closes
// with ErrInputBufferFull). An idle connection holds no buffer.
//
// Conn.Write takes a copy of what it cannot write at once, so the caller's
// slice is free when Write returns. When nothing is queued it writes to the
// socket directly, from the calling goroutine.
//
// # Backpressure
//
// Output is queued per connection. Above Options.WriteHighWater queued
// bytes, the loop stops reading from that connection, which lets TCP flow
// control slow the peer down; at Options.WriteLowWater it reads again.
// Options.MaxWriteBuffer caps the backlog: a Write that finds that many
// bytes still queued fails with ErrWriteBufferFull, writes nothing, and
// closes the connection; every later Write fails with net.ErrClosed. One
// Write is never refused for its own size. Options.OutputBudget bounds the
// output queued across the engine by holding back whatever produces it:
// connections with output queued, and connections whose callbacks wrote
// it (a source fanning out to slow sinks). Stats reports all of it.
//
// # Deadlines and timeouts
//
// SetDeadline, SetReadDeadline and SetWriteDeadline have a net.Conn's
// meaning, on timers owned by the loop (a heap; no runtime timer per
// connection). A read deadline bounds the wait for the input the handler
// waits for: it passes unless, before then, bytes arrived and OnData
// consumed all it had (a partial frame left unconsumed keeps it armed). A write deadline passes
// if output is still queued at its time, and a Write made after it fails
// with ErrWriteDeadline. When one passes, OnDeadline runs with
// ErrReadDeadline or ErrWriteDeadline (both match os.ErrDeadlineExceeded);
// the connection closes only if the handler says so or
// Options.CloseOnDeadline is set. Options.IdleTimeout ends connections
// that neither read nor write for that long, Options.ReadIdleTimeout those
// that receive nothing for that long (whatever they are sent): OnDeadline
// runs first with ErrIdleTimeout, so the handler can say goodbye, then
// the connection closes after its queued output.
//
// # Errors
//
// OnClose reports why a connection ended: nil after Close (and after a
// graceful Shutdown), io.EOF when the peer closed, ErrEngineStopped,
// ErrWriteBufferFull, ErrInputBufferFull, ErrIdleTimeout, a deadline error
// (with Options.CloseOnDeadline), ErrDetached, a *PanicError (see
// Panics), the failure of its event
// loop (see Engine.Err), or a *net.OpError ("read", "write", "shutdown")
// around an *os.SyscallError; errors.Is tells them apart. A limit that
// closes a connection (ErrInputBufferFull, ErrWriteBufferFull,
// ErrIdleTimeout, ErrHandshakeTimeout) is counted in Stats (LoopStats.
// Limits), and a LimitHandler is told before MaxInputBuffer closes one,
// so that it can say why in its protocol. A
// system call interrupted (EINTR) or not ready (EAGAIN) is retried and
// never reported. Any other failure of a read or a write, a reset
// (ECONNRESET, EPIPE) or a lack of kernel memory (ENOMEM, ENOBUFS) alike,
// closes that connection, and only it, dropping its queued output; a Write
// that fails so returns the error, and every later Write net.ErrClosed. A
// TCP connection closed with output dropped (a failure, CloseOnDeadline,
// MaxWriteBuffer, Conn.Abort) is reset, so that its peer sees the stream
// was cut rather than an end of file.
// (On io_uring, ENOBUFS from a receive means the kernel's provided-buffer
// ring ran dry, which is no error: the receive waits for buffers.)
//
// A listener whose accept fails for want of resources (EMFILE, ENFILE,
// ENOBUFS, ENOMEM) waits before trying again, 5 ms doubling to 1 s, so a
// process out of descriptors does not spin; the connections waiting in
// the backlog are accepted once it recovers. Stats counts the failures
// (AcceptErrors).
//
// # Panics
//
// A callback that panics ends its own connection, not the program, as a
// net/http handler does: the panic is recovered, logged with its stack
// to Options.ErrorLog (by default the log package's standard logger:
// "engine: panic in OnData serving 192.0.2.1:5678: ..."), the connection
// is reset (its queued output is dropped: it may stop in the middle of
// a message), and OnClose gets a *PanicError holding the value and the
// stack. Every other connection of the loop is served on. So it goes
// for OnOpen, OnData, OnEOF, OnDeadline, OnLimit, OnDrain and the
// functions given to Execute; a UDP socket, which serves every peer,
// loses only the datagram whose OnData panicked. A panic in OnClose is logged; in OnBoot,
// logged, and the engine shuts down (the handler was not set up); in
// OnTick, logged, and the ticks stop; in OnShutdown, logged. A
// tls.Config callback that panics (GetCertificate,
// VerifyPeerCertificate...) fails its handshake, on the handshake's
// goroutine, with a *net.OpError around the *PanicError. Containing a
// callback costs a deferred call, a few nanoseconds
// (docs/bench/panics.md). A package that runs its own users' code in
// the callbacks contains it with Conn.Recover (package websocket does,
// to send its close frame first). Options.CrashOnPanic lets every such
// panic crash the program instead, with the panic's full report.
//
// # TLS
//
// ListenTLS and DialTLS (and AdoptWith's TLS and ClientTLS) handshake with
// the standard crypto/tls before OnOpen; then the loop decrypts, so an
// established TLS connection costs no goroutine. A server's handshake
// starts once the client's ClientHello is whole: until then the loop holds
// the bytes, and no goroutine exists for it. The handshake then runs on a
// goroutine of its own, which ends with it, as net/http's does. At most
// Options.HandshakeWorkers handshakes compute at once (default
// max(16, 4*GOMAXPROCS)); one that waits for its peer holds its goroutine
// and no worker slot, so peers that stall their handshakes never delay
// another client's. Options.HandshakeTimeout (10 s) closes a handshake that
// has not ended, with ErrHandshakeTimeout.
//
// # Listeners, load balancers and restarts
//
// [Engine.ListenWith] opens a listener with a [ListenConfig]: TLS, a PROXY
// protocol header from the load balancers it trusts ([ProxyProtocol]:
// HAProxy's versions 1 and 2, read on the loop, no goroutine, before the
// TLS handshake and OnOpen; RemoteAddr is then the client's), and socket
// options (backlog, SO_REUSEPORT, buffer sizes, TCP_DEFER_ACCEPT,
// TCP_FASTOPEN, SO_BINDTODEVICE, a Control function).
// [Engine.ServeListener] serves a listener made elsewhere on the loops:
// one inherited from a parent, activated by systemd, or handed over by
// the process being replaced (package restart does both). A connection
// adopted from elsewhere reads its header with [Adoption.Proxy].
//
// # Limits
//
// What a peer can make the engine hold, and the bound on each;
// SECURITY.md in the repository has the full table, with net/http's
// behaviour beside each line and the test (TestLimits, and the TLS
// tests) that drives a hostile client to it while a well-behaved one is
// served:
//
//   - Connections: a descriptor each, up to the process's open-file
//     limit, and Options.MaxConns in all and Options.MaxConnsPerIP from
//     one address (no cap by default, as net/http): one more is reset as
//     it arrives, with ErrTooManyConns, and counted (LoopStats.Refused).
//     When accept fails for want of a descriptor, the listener backs off
//     (5 ms doubling to 1 s) and the open connections are served. None
//     holds a goroutine (on the net backend, one while it waits for
//     input), more than three loop timers, or a buffer while idle (about
//     240 B).
//   - Idle connections: Options.IdleTimeout and Options.ReadIdleTimeout
//     (none by default, as net/http); a peer that vanished is found by TCP
//     keep-alive, 15 s on accepted connections (Options.TCPKeepAlive).
//   - Unconsumed input: Options.MaxInputBuffer per connection (4 MiB);
//     past it the connection closes with ErrInputBufferFull, after the
//     replies queued and a LimitHandler's word.
//   - Queued output: reading pauses above Options.WriteHighWater (64 KiB),
//     so a peer that does not read holds that and one read's output (on
//     io_uring also what the multishot receive had brought when reading
//     paused: under 128 KiB on Linux 6.17 and later, which bound a
//     multishot receive's bytes); Options.MaxWriteBuffer (16 MiB) closes with
//     ErrWriteBufferFull, and Options.OutputBudget bounds the engine's
//     total (none by default). A close waits for its output until an idle
//     timeout, a write deadline with Options.CloseOnDeadline, or
//     Shutdown's context ends it.
//   - Input waiting for a Pool: PoolOptions.MaxQueued per connection (64
//     KiB), then the loop stops reading it; a connection holds at most one
//     of PoolOptions.MaxWorkers workers.
//   - A PROXY header: ProxyProtocol.Timeout (5 s) and MaxHeader (4 KiB),
//     read from trusted sources only; a bad one closes with ErrProxyHeader.
//   - A TLS handshake: Options.HandshakeTimeout (10 s, where net/http has
//     none by default). Before its ClientHello is whole, about 1.7 KiB and
//     no goroutine. After that, while it waits for its peer, a goroutine,
//     8 KiB of stack and about 16.5 KiB of crypto/tls state (net/http: 16
//     KiB and 17.5 KiB), and no worker slot. At most 256 KiB of handshake
//     input is held, plus a record. A new client's handshake beside 10,000
//     stalled ones takes what it takes beside none (about 1 ms on 2 cores):
//     docs/bench/tls-stall.md in the repository has the figures and the
//     command.
//
// # Lifecycle
//
// Connections are served from Start on: OnOpen runs only after OnBoot
// has returned, even for listeners opened and connections adopted before.
// Shutdown stops accepting, gives a Drainer handler a word with each
// connection, lets queued output drain and closes the connections,
// waiting until its context ends; Stop closes everything at once. A
// callback's Shutdown action starts the same graceful shutdown, bounded by
// Options.ShutdownTimeout (10 s by default). Neither leaves a goroutine or
// descriptor behind.
//
// A graceful close (Conn.Close, the Close action, Shutdown) delivers what
// was written: the queued output goes out, the sending side is shut down
// and the connection lingers, dropping what its peer still sends, until
// the peer's end or Options.CloseLinger (500 ms), as net/http does: a
// socket closed with input unread is reset, and the reset discards output
// still in flight. Shutdown returns a *ShutdownError when it closed
// connections with output lost (its context ended first, or a peer went
// on sending past the linger). Abort and Stop do not wait. If an event loop's backend fails, the engine closes
// every connection (OnClose gets the failure) and stops, and Err reports
// it.
//
// # Limitations
//
// A callback that blocks stalls every connection of its loop: run the
// callbacks on a [Pool] (Options.Pool), or hand long work to a goroutine,
// which may write to the [Conn] or bring its result back with
// [Conn.Execute]. A connection whose callbacks run on a Pool cannot be
// detached (errors.ErrUnsupported), and a pool whose workers all wait in
// callbacks serves no other connection until one returns: bound those
// waits. [Engine.Adopt] needs a connection that exposes its descriptor
// (syscall.Conn): a *tls.Conn is refused, so adopt the raw connection
// with [Adoption.TLS] instead. A TLS connection cannot leave its loop:
// [Conn.Detach] refuses it with errors.ErrUnsupported. On Windows, UDP
// and [Options.ReusePort] fail with errors.ErrUnsupported; on WebAssembly
// there are no sockets to hand the loops: Listen, Dial and Adopt fail
// so. The net backend ([backend.Net]) costs a goroutine per operation in
// flight and is the slowest.
//
// # Platforms
//
// As package aio: on Linux every test runs on epoll, on io_uring and on
// the portable net backend ([backend.Net]); the kqueue backend (macOS, the BSDs)
// builds and vets but is not run in CI; on Windows the tests run under
// Wine in CI (.ci/wine/run; docs/windows.md says what Wine lacks); on
// WebAssembly the package builds and an engine starts, but listening,
// dialing and adopting fail (see Limitations).
package engine
