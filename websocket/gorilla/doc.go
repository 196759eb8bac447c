// Package gorilla is gorilla/websocket's API (v1.5.x) on gale's loops: a
// program written against github.com/gorilla/websocket ports by changing
// its import,
//
//	import websocket "github.com/galeio/gale/websocket/gorilla"
//
// and nothing else, for the common subset: Upgrader, Dialer (and
// DefaultDialer), Conn's ReadMessage, NextReader, ReadJSON, WriteMessage,
// NextWriter, WriteJSON, WritePreparedMessage, WriteControl, the deadline
// and limit setters, the ping, pong and close handlers, Close, and
// CloseError, IsCloseError, IsUnexpectedCloseError, FormatCloseMessage,
// the message types and close codes with gorilla's values. It is built on
// package websocket (gale's callback API), as package aio is gaio's API on
// the same loops. gorilla's echo server, ported so (Example runs it):
//
//	var upgrader = websocket.Upgrader{} // use default options
//
//	func echo(w http.ResponseWriter, r *http.Request) {
//		c, err := upgrader.Upgrade(w, r, nil)
//		if err != nil {
//			return // Upgrade answered the request
//		}
//		defer c.Close()
//		for {
//			mt, message, err := c.ReadMessage()
//			if err != nil {
//				break
//			}
//			if err := c.WriteMessage(mt, message); err != nil {
//				break
//			}
//		}
//	}
//
// served by net/http's http.ListenAndServe or gale's httpd.Server (which
// keeps the connection on the loop that served its request, and costs
// less per connection; see below).
//
// # What it costs
//
// The API is gorilla's, and so is its price: a blocked ReadMessage holds
// a goroutine, as in gorilla. The loop reads the connection, parses its
// frames and queues what it received for the reader; ReadMessage and
// NextReader wait on that queue. So a server with a goroutine per
// connection waiting in ReadMessage costs a goroutine per connection, as
// gorilla's does, plus gale's connection state. Measured at 10,000 idle
// connections (docs/bench/gorilla.md): gorilla's echo server holds 18 KB
// per connection; the same program ported by its import, 23 KB on
// net/http (which keeps its buffers while the handler runs, where
// gorilla reuses them) and 9.5 KB on gale's httpd.Server; package
// websocket's callbacks, with no goroutine, 0.6 KB. The port spends
// 1.1–1.2× gorilla's CPU per message (each message wakes the reader's
// goroutine from the loop). Port first, then move
// the connections that must be cheap to callbacks.
//
// # Reading
//
// Each connection has an inbox: the loop queues into it the pieces of
// messages as they arrive (a message of any length streams through
// NextReader's reader, never held whole unless ReadMessage gathers it),
// and the control frames met between them. It holds at most 64 KiB of
// unread data (plus what one receive brought): past that, the loop stops
// reading the connection until the reader brings it down to 32 KiB, and
// TCP's flow control holds the peer back. Memory per connection is so
// bounded, whatever the peer sends, as long as SetReadLimit bounds what
// ReadMessage gathers.
//
// The handlers (SetPingHandler, SetPongHandler, SetCloseHandler) run on
// the reading goroutine, from NextReader, ReadMessage or a message
// reader's Read, when it reaches the control frame, as gorilla's do. A
// read error is final, as in gorilla: a passed read deadline (a net.Error
// whose Timeout is true), ErrReadLimit, a *CloseError, an error matching
// net.ErrClosed after Close.
//
// # Writing
//
// Writes are queued for the loop, which sends as the peer reads. A writer
// waits before writing while 256 KiB or more are queued for the peer (a
// peer that does not read holds the writer back, as gorilla's blocked
// write does), until the write deadline (then a timeout, final for
// writes); so a connection holds at most that plus the message being
// written. WriteControl never waits: the frame goes out ahead of queued
// messages.
//
// # Concurrency
//
// As gorilla's: one concurrent reader and one concurrent writer per
// connection; Close, WriteControl and the handler setters are safe from
// any goroutine.
//
// # Compatibility
//
// gorilla/websocket v1.5.3's own test suite runs against this package in
// CI (.ci/gorilla-compat.sh): of its 59 tests and examples, the 28 that
// do not use gorilla's internals compile here, and 23 of them pass;
// docs/gorilla.md gives the reason for each of the others.
//
// # Limitations
//
// Some of gorilla's options are accepted and ignored, for they have no
// meaning on gale's loops: Upgrader.HandshakeTimeout, ReadBufferSize and
// WriteBufferPool; Dialer.NetDialTLSContext (TLS is done on the loop),
// ReadBufferSize and WriteBufferPool; Conn.EnableWriteCompression and
// SetCompressionLevel (the level is checked, then ignored: gale
// compresses at flate.BestSpeed the messages of 64 bytes or more).
// A connection from Dialer.NetDial or NetDialContext that is not a
// socket of package net's (a wrapper) is relayed to the loop by two
// goroutines. The loop answers every ping with a pong as it
// arrives, and every close frame with one, whatever the handlers do: a
// ping handler that writes a pong sends a second one, and a close
// handler cannot withhold the answer. An empty close payload is sent as
// CloseNormalClosure, and WriteControl refuses a close code RFC 6455
// forbids sending. NetConn returns a stand-in whose Read and Write fail
// (the loop owns the socket): its addresses, Close and deadlines are the
// Conn's. A Dialer proxies through http:// proxies only (no SOCKS5),
// returns with a refused handshake only as much of its body as came with
// its head (up to 1 KiB), and reports to an httptrace.ClientTrace the
// dial's and the handshake's events but not TLS's. A zero
// Dialer.HandshakeTimeout means 10 s. NewClient, which takes an
// established net.Conn, is missing; so are the concurrent-write panic
// (concurrent writes here are safe, though they may interleave messages
// in either order) and BufferPool's use. Upgrader and Dialer gain a
// field, Engine, the gale engine that runs their connections.
package gorilla
