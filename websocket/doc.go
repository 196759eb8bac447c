// Package websocket serves and dials WebSocket connections (RFC 6455),
// with permessage-deflate (RFC 7692), on gale's event loops: a connection
// costs no goroutine, its frames are parsed and its messages handed to
// callbacks on its loop, and writes never wait for the peer.
//
// # Entry points
//
// An [Upgrader] turns HTTP requests into connections. On gale's HTTP
// server ([httpd.Server]) the upgraded connection stays on the loop that
// served its request, TLS included; on a net/http server the connection
// is hijacked and adopted onto an engine's loops (see [Options.Engine]).
// On an httpd.Server whose ExtendedConnect is set, a browser may open its
// WebSocket as a stream of its HTTP/2 connection (RFC 8441: a CONNECT with
// :protocol websocket, which Upgrade answers 200); the stream is relayed
// to one of Options.Engine's loops, and the Conn is served as any other.
// A [Dialer] opens client connections, doing the handshake on a loop too,
// directly or through an HTTP proxy's CONNECT tunnel ([Dialer.Proxy]).
// Either way the connection is a *[Conn], and its events go to a [Handler]:
//
//	type echo struct{ websocket.BaseHandler }
//
//	func (echo) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
//		c.WriteMessage(typ, data)
//	}
//
//	u := &websocket.Upgrader{Options: websocket.Options{Handler: echo{}}}
//	http.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) })
//	(&httpd.Server{}).ListenAndServe() // or net/http's
//
// # Concurrency
//
// Handler callbacks run on the connection's loop, one at a time per
// connection; one that blocks stalls its loop's other connections, so
// run them on a pool (see Callbacks on a pool), or hand long work to a
// goroutine. The data OnMessage is given is valid
// only during the call. Conn's methods are safe from any goroutine,
// callbacks included, and none waits: not for the peer (see below), nor
// for another goroutine's stream. Messages go out whole, one after
// another, in the order their writes were made (concurrent ones in
// either order). A stream (NextWriter) is one message too: its fragments
// go out as they are written, and a message begun while it is open, by
// any goroutine (a whole one, copied, a PreparedMessage, referenced, or
// another stream), is held and goes out after its last fragment, in
// order; control frames go out at once, between fragments. So a message
// written once a stream's Close returned follows the stream, and no two
// messages interleave. No method runs a callback itself: the OnClose of
// a connection that a write or Close ends runs later, on its loop, so
// they may be called with the caller's own locks held.
//
// A connection's value (Conn.Context) is there before its first
// callback however it is given. Upgrade's connections hold their
// callbacks until the HTTP handler calls SetContext or returns, so the
// gorilla (and nbio) habit, c.SetContext(v) once Upgrade returned, is
// safe, as is keeping the Conn in a table of the handler's; UpgradeWith
// gives the value with the upgrade, for a handler that goes on after it;
// a client connection's value is DialWith's, as its OnOpen may run before
// Dial returns. (A connection that ends while its callbacks wait gets
// OnOpen and OnClose when they may begin, on a goroutine of their own.)
//
// # Callbacks on a pool
//
// Options.Pool, an [engine.Pool], runs the Handler's callbacks (OnOpen,
// OnMessage, OnPing, OnPong, a StreamHandler's OnMessageStart and
// OnMessageData, OnClose) on the pool's workers instead of the loop, in
// the order the loop read the frames and never two at once for one
// connection; so a callback may block (a database, another service)
// while the loop serves the other connections:
//
//	pool := engine.NewPool(engine.PoolOptions{MaxWorkers: 64})
//	defer pool.Close() // after the server stopped
//	u := &websocket.Upgrader{Options: websocket.Options{Handler: h, Pool: pool}}
//
// The loop still reads and checks the frames, answers pings and close
// frames, and enforces the limits. The data a pooled callback is given
// is a copy, valid during the call as on the loop. While
// engine.PoolOptions.MaxQueued bytes (64 KiB) of a connection's messages
// wait for the pool, its loop stops reading the connection (its peer is
// slowed by TCP), and reads again once half were delivered; a message
// larger than that is queued whole (ReadLimit bounds it). Stats count a
// message when it is queued. A pooled callback that panics fails its
// connection as on the loop (1011), and the connection's queued
// callbacks but OnClose are dropped. PauseRead stops the reading at
// once, but the pieces and messages already queued are still delivered.
// OnClose runs on the pool after every callback queued before it; an
// Upgrader's Shutdown does not wait for it.
//
// # Reading in pieces
//
// A Handler that also implements [StreamHandler] gets every message in
// pieces as its frames arrive, on the loop, instead of whole: an
// OnMessageStart, then OnMessageData calls, the last marked final (nbio's
// OnDataFrame, gorilla's NextReader without a goroutine). An uncompressed
// frame's payload is handed over as each receive brings it, from the
// engine's own bytes; a compressed message is decompressed as it comes,
// 16 KiB at most at a time. The rules are those of whole messages:
// ReadLimit caps the total of the pieces (the decompressed total for a
// compressed message), text is checked as UTF-8 across them (a character
// may span two), and a violation closes the connection (1009, 1007)
// before the piece that broke the rule is handed over, with no final
// call. Control frames between fragments are handled between pieces. A
// handler whose consumer falls behind calls PauseRead, which stops the
// pieces at once, until ResumeRead. ExampleStreamHandler hashes messages
// of up to 64 MiB that way, holding none.
//
// # Writes and slow peers
//
// WriteMessage, a stream's Write, WritePrepared and Broadcast write what
// the socket takes at once and queue the rest, which the loop sends as
// the peer reads; they never block on the peer. Options.MaxQueued caps
// each connection's queue, the messages held behind a stream included
// (Buffered counts both): a write that finds it full fails with
// ErrQueueFull, and the connection is closed (or, with
// Options.DropWhenFull, only the message is dropped, unless it is a
// stream some of which went out: then the connection is closed too, as
// nothing could follow a message cut short). Once a close frame was sent
// (by Close, or in answer to the peer's) every write fails at once with
// ErrCloseSent, and once the connection has ended otherwise (the peer
// gone, CloseNow, a full queue) with an error matching net.ErrClosed; a
// stream left open ends with the connection, and the messages held
// behind it are dropped. Broadcast and PreparedMessage encode, and
// compress, a message once for many connections.
//
// # Protocol
//
// Incoming frames are checked as RFC 6455 says: masking by direction,
// reserved bits and opcodes, control frame sizes, fragmentation,
// UTF-8 in text messages (incrementally: a text message invalid in its
// first fragment fails then, not once whole), close codes and reasons.
// A violation fails the connection with a close frame carrying the
// matching code (1002, 1007 or 1009) and OnClose gets a *ProtocolError
// or ErrReadLimit. Pings are answered with pongs by the loop. Close runs
// the closing handshake, bounded by Options.CloseTimeout.
//
// # Panics
//
// A handler that panics in OnOpen, OnMessage, OnPing or OnPong fails
// its connection only, as the engine does for its own callbacks: the
// panic is recovered and logged with its stack (to the engine's
// Options.ErrorLog; httpd.Server's ErrorLog for connections it
// upgraded), the peer gets a close frame 1011, internal error (RFC 6455
// §7.4.1), the connection closes once that is written, and OnClose gets
// the *engine.PanicError. A panic in OnClose is logged. The engine's
// Options.CrashOnPanic lets such panics crash the program instead.
//
// # Keepalive
//
// A peer can vanish without a word (a NAT or a proxy that forgot the flow,
// a laptop shut); its connection then waits for input that never comes.
// With [Options.PingInterval] set, a connection whose peer sent nothing
// for that long is pinged, and one that then hears nothing for
// Options.PongTimeout (any input counts, pong or other) is cut at once,
// without a close frame, which a dead peer could not answer: OnClose gets
// ErrPongTimeout, counted under 1006 (StatusAbnormalClosure), and a peer
// still there sees the connection reset, 1006 too. It runs on the
// connection's read deadline, a timer of its loop: no goroutine and no
// runtime timer per connection, and about 200 bytes of heap (the engine's
// timers, which a connection with no deadline does not hold). The engine
// clears a read deadline once the input it waited for came, so each
// receive re-arms it, which costs a few microseconds and a few small
// allocations: off by default, it suits connections that are mostly
// idle. docs/bench/websocket-keepalive.md in the repository has the
// figures. Server and client connections alike.
//
// # Compression
//
// With Options.Compression set, permessage-deflate is negotiated.
// Compressors and decompressors are pooled and shared (a flate writer is
// about 1 MB: never one per connection); outgoing messages are compressed
// each on its own, which every peer accepts whatever context takeover was
// agreed, so sending keeps no state per connection. Incoming context
// takeover is refused by default (CompressionEnabled), and accepted with
// CompressionContextTakeover at the cost of the peer's window (up to
// 32 KiB) per connection.
//
// # Limits
//
// Nothing a peer sends makes a connection hold memory without a bound,
// and none costs a goroutine, but one that net/http terminated TLS for
// (see Upgrader). By default a message is held as it arrives up to
// Options.ReadLimit, 1 MiB after decompression (past it: 1009 and
// ErrReadLimit); by a StreamHandler's connection, none of it: a partial
// frame header, and for a compressed message a pooled decompressor
// (about 44 KiB, its window included), a 16 KiB piece and the coroutine
// that runs it (its goroutine stack), while the message streams, plus,
// once it paused reading, what one receive brought; a control frame up to 125 bytes; output for a peer that
// does not read up to Options.MaxQueued, 1 MiB (twice that behind an
// open stream; then ErrQueueFull), and pongs up to the engine's
// WriteHighWater, 64 KiB, past which the loop stops reading the peer; the
// close handshake, and the writing of what is queued once the peer ended
// the connection, for Options.CloseTimeout, 5 s; a context-takeover
// window, with CompressionContextTakeover only, to 32 KiB. A Dialer
// reads a response head of at most 16 KiB (and so a proxy's answer to
// CONNECT), within HandshakeTimeout, 10 s. A connection whose callbacks wait for its HTTP handler (see
// Upgrader.Upgrade) holds what one receive brought, reading paused.
// Nothing closes an idle connection by default (no ping, no
// timeout, as with gorilla's and net/http's hijacked connections): set
// Options.PingInterval (see Keepalive), or the engine's ReadIdleTimeout.
// SECURITY.md lists every resource a peer can make a server hold, its
// bound and its test.
//
// An idle upgraded connection keeps about 260 bytes of heap on an
// httpd.Server (the engine's Conn, this package's, the loop's entries
// and the Upgrader's), and each upgrade leaves about 3 KB of garbage,
// most of it the HTTP request's. With the runtime's defaults (GOGC=100)
// a heap grows to twice what it keeps before it is collected, so a
// server's memory grows by some 500 to 700 bytes a connection. A memory
// limit (runtime/debug.SetMemoryLimit, or GOMEMLIMIT) set for the
// connections a server expects holds it nearer the live heap, at the
// cost of more collections while they arrive: a choice for the
// program, which this package does not make. docs/bench/figures.md in
// the repository has the figures.
//
// # Limitations
//
// A message reaches OnMessage whole, after it all arrived, so a server
// that takes large messages raises [Options.ReadLimit] and holds them
// (Options' example shows how), or takes them in pieces with a
// [StreamHandler]. There is no io.Reader over a message (gorilla's
// NextReader): a reader would block, and a callback must not.
// permessage-deflate is the only extension; outgoing messages never use
// context takeover, and under a window limit below 15 bits they are
// Huffman-coded only (compress/flate cannot shrink its window). The
// [Dialer] speaks HTTP/1.1, and through http:// proxies only (CONNECT,
// Basic credentials: no https:// or SOCKS proxy, no other
// authentication scheme). A WebSocket over
// HTTP/2 (RFC 8441, server side only) costs what a TLS connection under
// net/http does: two goroutines relay its stream through a socket pair
// (two descriptors) to the loop. Nothing pings or times out an idle
// connection by default (see Limits). Keepalive counts input only: a
// connection whose reading is paused (PauseRead, or the engine's
// WriteHighWater while the peer does not read) for PingInterval and
// PongTimeout hears nothing and is cut. The engine that serves the
// connections has no engine.Options.Pool of its own (NewEngine and
// httpd refuse one): the frames are read on its loops.
package websocket
