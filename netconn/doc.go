// Package netconn puts the standard library's shapes — net.Listener,
// net.Conn, net.PacketConn — on gale's event loops, so that code written
// for package net (net/http, crypto/tls, bufio, io.Copy, gRPC) runs on
// epoll or io_uring unchanged:
//
//	ln, err := netconn.Listen("tcp", "127.0.0.1:8080")
//	...
//	http.Serve(ln, handler)
//
// Listen, ListenConfig, Dial, Dialer and ListenPacket mirror package
// net's; networks are "tcp", "tcp4", "tcp6" and "unix" for streams,
// "udp", "udp4", "udp6" and "unixgram" for datagrams. ListenConfig and
// Dialer embed net's, which creates the socket; it then moves onto the
// loops.
//
// # How a connection is served
//
// The loops of a backend (one per GOMAXPROCS) start with the first
// connection or listener and stop shortly after the last one closes. A
// Read that finds nothing received parks its goroutine; the loop keeps
// one receive in flight for the connection (on io_uring the ring's
// receive, on epoll a read on the edge) and copies what arrives straight
// into the parked Read's slice, keeping what does not fit (up to 64 KiB,
// then the loop stops receiving and TCP holds the peer back) for the next
// Read. An idle connection holds no buffer. A Write writes what the socket
// takes from the calling goroutine and has the loop send the rest; it
// returns once every byte is written or an error stopped it — never a
// short count with a nil error.
//
// # Concurrency and buffers
//
// Every method is safe from any goroutine, as net.Conn promises: Reads
// are served one at a time, Writes one at a time, and Read, Write, Close
// and the deadline setters may run concurrently. Read's slice is written
// only until Read returns (a Read stopped by its deadline or by Close has
// its receive's end collected first); Write's slice is read only until
// Write returns.
//
// # Deadlines and errors
//
// Deadlines are timers owned by the loop (no runtime timer per
// connection) and end a blocked call with an error matching
// os.ErrDeadlineExceeded whose Timeout() is true; a deadline already past
// fails a call at once, with n == 0. Close wakes blocked calls with
// net.ErrClosed. Errors are *net.OpError, as package net's; a Read at the
// end of the stream returns io.EOF.
//
// # Moving between modes
//
// A connection can move between a goroutine and an engine's callbacks
// with no byte lost or duplicated: FromEngine turns an *engine.Conn into
// a *Conn, and Conn.ToEngine puts a *Conn onto an engine, each carrying
// the bytes received but not yet consumed. The engine's OnOpen may run
// before ToEngine returns: Conn.ToEngineWith gives the connection its
// value (engine.Adoption.Context) first, and can begin TLS on it.
//
// # io.Copy
//
// Conn implements io.ReaderFrom and io.WriterTo: from a file the kernel
// sends the bytes (sendfile), into a file it moves them (splice); other
// copies go through a pooled buffer.
//
// # Limitations
//
// Only the networks above are served; others ("ip4:icmp", "unixpacket")
// fail with a *net.OpError around net.UnknownNetworkError. Only TCP and Unix stream
// connections move between modes, and a TLS connection of an engine
// never leaves its loop: [FromEngine] refuses it, as
// [engine.Conn.Detach] does. There is no TLS here: wrap a [Conn] in
// crypto/tls, as on package net, or hand it to an engine with
// [Conn.ToEngineWith], which can begin TLS on it. On Windows only TCP is
// served (on the net backend; under Wine in CI, docs/windows.md): UDP,
// and Unix sockets where the system has none, fail with an error
// matching errors.ErrUnsupported, as every [Listen] and [Dial] does on
// WebAssembly, where gale cannot take a socket.
//
// # Backends
//
// ListenConfig.Backend and Dialer.Backend choose the loops' kernel
// interface: [backend.Auto] (epoll on Linux, kqueue on the BSDs and
// macOS), or one by name. GALE_BACKEND overrides the choice. On io_uring
// the loop's goroutine is locked to its thread, and waking a parked Read
// from it costs scheduler hand-offs that epoll's loop does not pay:
// package backend's table says what Auto picks for each package and why.
package netconn
