// Package httpd serves HTTP/1.x and HTTP/2 with any net/http Handler
// from gale's event loops.
//
// A [Server] looks and behaves like net/http's: the same fields where they
// exist (Handler, TLSConfig, the timeouts, MaxHeaderBytes, ErrorLog,
// ConnState, BaseContext, ConnContext), Serve, ListenAndServe,
// ListenAndServeTLS, Shutdown and Close, and handlers that get a real
// *http.Request and an http.ResponseWriter that implements http.Flusher,
// http.Hijacker and what http.ResponseController asks for.
//
// What differs is the cost of a connection. By default ([ModeLoop]) every
// connection is served by an engine loop: request heads are framed on the
// loop as they arrive, with no goroutine per connection, and parsed there
// once whole; only a request whose head is complete takes a goroutine,
// its own (one kept from an earlier request, or a new one), for as long
// as its handler runs. An idle keep-alive connection costs its socket and
// about a kilobyte. Request bodies stream: the loop hands the handler's
// Body.Read what arrives, in a buffer that grows with it, and stops
// reading the socket while BodyBufferSize bytes (nearly) wait unread; a
// handler writing to a client that does not read waits in Write.
// [ModeMixed] serves connections with net/http's own goroutine per
// connection while fewer than MixedThreshold are open, and with the
// loops beyond.
//
// # HTTP/2
//
// Over TLS, a client that offers "h2" by ALPN (every browser, net/http's
// client, gRPC) is served HTTP/2, as by net/http's server; with
// [Server.Protocols]' UnencryptedHTTP2, so is a cleartext client that
// begins with HTTP/2's preface (prior knowledge) or asks with "Upgrade:
// h2c". Frames are read on the loop, whole and in place; each stream's
// request goes to a handler goroutine once its header block is whole
// (HPACK by golang.org/x/net/http2/hpack), with the *http.Request and
// ResponseWriter semantics of net/http's HTTP/2: Flusher, trailers,
// http.ResponseController's deadlines, a body read while the response is
// written, and r.Context() canceled by the client's RST_STREAM. An idle
// HTTP/2 connection holds no goroutine: its HPACK tables, a few hundred
// bytes of state and its socket. Flow control runs both ways: a request
// body's DATA is held up to the stream's window (HTTP2's
// MaxReceiveBufferPerStream, 1 MiB; all of a connection's bodies up to
// MaxReceiveBufferPerConnection, 1 MiB), given back as the handler reads;
// a handler's Write waits for the client's window, and for the
// connection's output to drain past 128 KiB.
//
// Measured against net/http's HTTP/2 server on one handler, h2c under
// h2load on this project's 2-core machine (go run ./cmd/galebench
// -scenarios h2; docs/bench/h2.md): 2.39×, 2.33× and 1.88× its requests/s
// with 1 connection × 100 streams, 50 × 10 and 500 × 1, at 0.44×, 0.38×
// and 0.40× its server CPU per request; an idle connection 2,322 bytes of
// RSS at 10,000, against net/http's 28,888.
//
// Request heads of the common shape are parsed on the loop straight into
// the *http.Request, and every other head by net/http's own parser
// (http.ReadRequest) with the checks net/http's server adds (Host, header
// names and values, the protocol version); a fuzz test holds the first to
// the second, so what a handler is given, and what is refused with which
// status, is net/http's. A keep-alive GET costs 5 allocations (net/http's
// server: 13); the strings of such a head share one allocation, so a
// value a handler keeps keeps the head's text (at most MaxHeaderBytes).
// Bodies (Content-Length and chunked, with trailers) are framed by this
// package's incremental decoder, which follows net/http's rules.
//
// # Concurrency
//
// A handler runs on a goroutine of its own, as in net/http; the
// ResponseWriter is for that goroutine (or one at a time), until the
// handler returns. No request waits for another's handler: there is no
// shared pool to fill. A handler's deadlines (http.ResponseController's
// SetReadDeadline and SetWriteDeadline) hold for its request only.
// Hijack hands over every byte the client sent after the head, in order.
// ConnState runs on the connection's loop and must not block.
//
// # Limits
//
// Every resource a client can make the server hold has a bound, and no
// default is less safe than net/http's: a head is capped by
// MaxHeaderBytes and MaxHeaderValueCount (431), a body's buffer by
// BodyBufferSize (128 KiB, grown as bytes come), a response's queue at
// 256 KiB (the handler's Write then waits), an unread body is dropped up
// to 256 KiB before the connection closes, and a stalled TLS handshake
// holds no worker of the engine's.
//
// HTTP/2 adds its own bounds, each with a hostile client's test
// (TestH2RapidReset and its neighbours): at most
// HTTP2.MaxConcurrentStreams (250) streams open and as many handlers
// running per connection, those of streams the client reset included (a
// rapid reset, CVE-2023-44487, is refused and, past a count, disconnected
// with ENHANCE_YOUR_CALM); a header block's decoded list within
// MAX_HEADER_LIST_SIZE (MaxHeaderBytes and some; a larger one, as an
// HPACK bomb, is answered 431 without being held) and its compressed
// bytes within that and 64 KiB (a CONTINUATION flood, CVE-2023-45288,
// ends the connection); frames that do no work (PING, SETTINGS,
// PRIORITY, empty DATA and CONTINUATION, unknown types) within a budget
// of 2,000 that refills at 500 a second; answers to a client that does
// not read them within 1 MiB of output; and a client that keeps its
// window shut, or does not read, holds a handler's Write for
// DefaultHTTP2StallTimeout (30 s; HTTP2.WriteByteTimeout) at most, then
// the stream is reset, or the connection closed.
// Like net/http's, a Server sets no timeouts and no cap on handlers by
// default: a server on the internet should set ReadHeaderTimeout,
// ReadTimeout (or per-request deadlines), WriteTimeout and IdleTimeout,
// and may set [Server.MaxHandlers], beyond which a request is answered 503 at
// once, never queued, and Engine.MaxConns and Engine.MaxConnsPerIP,
// beyond which a connection is reset as it arrives (Stats counts both).
// SECURITY.md, at the repository's root, lists every
// such resource with its bound, its default beside net/http's, and the
// test (TestLimits) that drives a hostile client to it while a
// well-behaved one is served.
//
// # Server-sent events
//
// [EventStream] answers a request with an event stream (text/event-stream,
// the WHATWG HTML standard's server-sent events, which a browser reads
// with EventSource) and returns it as a [Stream], on which any goroutine
// may [Stream.Send] an [Event] (ID, type, data, retry) without waiting:
// data with line breaks goes as one "data:" field per line, and an ID or
// type that cannot be framed is refused (ErrInvalidEvent). On a
// loop-served HTTP/1.x connection the connection switches to the stream
// on its loop, and the handler returns: an idle stream then holds no
// goroutine and no runtime timer, only its socket, about a kilobyte of
// heap and a timer of its loop, which sends a heartbeat comment every
// EventStreamOptions.Heartbeat (15 s). Over HTTP/2, and on net/http's
// connections, the handler's goroutine holds the stream instead, in
// [Stream.Serve], with a ticker for the heartbeats: a stream's DATA there
// waits for the client's flow-control windows, as the handler's writes
// do. A handler calls Serve in any case; it returns at once for a stream
// on the loop (ExampleEventStream).
//
// Each stream's queue is bounded (EventStreamOptions.MaxQueued, 256 KiB):
// a Send that finds it full fails with [ErrQueueFull] and the stream is
// cut, or, with DropWhenFull, only that event is dropped; so a client
// that stops reading holds no more than that. A stream ends with
// [Stream.Close] (after its queued events), when its client goes, when
// it is cut, and when Shutdown closes it; [Stream.Done] and
// EventStreamOptions.OnClose tell it, and [Stream.Err] says why. A
// reconnecting client's Last-Event-ID is [Stream.LastEventID].
// [Broadcast] sends one event to many streams, encoding it once
// ([PreparedEvent]).
//
// Measured with 10,000 idle streams opened from another process
// (GALE_SSE=10000 go test -run '^TestSSEMeasure$' ./httpd;
// docs/bench/sse.md): an idle stream costs the server no goroutine, 815
// bytes of heap and 929 of RSS on epoll, against net/http's two
// goroutines, 15,464 bytes of heap and 24,722 of RSS for a handler that
// waits on a channel and flushes. Streams count in Stats as upgraded
// connections.
//
// # Behind a load balancer
//
// [Server.ProxyProtocol] reads the PROXY protocol header (v1 or v2) that
// a trusted balancer sends first on each connection, on the loop, before
// the TLS handshake; the request's RemoteAddr is then the client's
// (ExampleServer_proxyProtocol). Serve takes any listener, so one
// inherited from systemd or handed over by the process being replaced
// (package restart) serves as one opened here; Shutdown then drains the
// requests in flight, and RegisterOnShutdown with websocket's
// Upgrader.Shutdown tells WebSocket clients to reconnect (1012). With
// [Server.HandOff] set, Shutdown hands idle keep-alive connections to
// the replacing process instead of closing them, which serves them on
// with [Server.ServeConn]: their clients never reconnect.
//
// # Differences from net/http
//
// A handler is given what net/http would give it, and a client gets the
// same answers, except where this package chose otherwise:
//
//   - r.Context().Value(http.ServerContextKey) is nil: there is no
//     *http.Server.
//   - The body can be read after the response began, without
//     http.ResponseController's EnableFullDuplex.
//   - A response the handler finishes within 4 KiB (net/http: 2 KiB)
//     gets a Content-Length, and so does a HEAD response whose handler
//     wrote more: the length of what it wrote.
//   - A body the handler left unread does not hold the response back: it
//     goes out at once and the loop drops the rest as it comes (net/http
//     first reads up to 256 KiB). A chunked one closes the connection
//     after the response, where net/http reads it and keeps the
//     connection.
//   - [Server.ConnState] reports http.StateNew for a TLS connection after
//     its handshake, not before.
//   - Hijack fails on a TLS connection (see Limitations).
//   - A head of more than [Server.MaxHeaderValueCount] field lines (500)
//     is refused with 431 on every Go release, as net/http does from Go
//     1.27 on; one longer than MaxHeaderBytes + 4 KiB is refused with 431
//     exactly, where net/http's threshold depends on its read-ahead.
//   - A malformed line in a head is answered 400 only once the head is
//     whole, not at the line; a client that ends its stream in
//     the middle of a head is closed without net/http's 400.
//   - A 2xx answer to CONNECT is framed as the net/http of the Go release
//     the program is built with frames it: from Go 1.27 on, as a tunnel.
//   - Over HTTP/2, the Keep-Alive and Upgrade fields a handler sets are
//     dropped with Connection and Transfer-Encoding (RFC 9113 §8.2.2;
//     net/http sends the first two, which curl, nghttp and Chromium
//     refuse); the frames read are 16 KiB at most by default (net/http
//     reads 1 MiB), since a frame is read whole on the loop; and a
//     response stalled by its client is reset after
//     DefaultHTTP2StallTimeout (net/http waits for ever).
//
// # Limitations
//
// HTTP/2 has no server push (http.Pusher; browsers dropped it); RFC
// 8441's extended CONNECT (WebSocket over HTTP/2) is announced only with
// Server.ExtendedConnect, and a stream given to [Tunnel] is served
// through its reads and writes, not on the loop as an upgraded HTTP/1.1
// connection is (package websocket relays it); PRIORITY frames are read and ignored, and streams share a connection's
// window first come, first served. A TLS connection cannot be hijacked: Hijack returns http.ErrNotSupported
// ([github.com/galeio/gale/websocket.Upgrader] upgrades it on its loop instead). A chunked body
// that the loop had decoded ahead of its handler comes out of a hijacked
// connection re-framed as one chunk of the same data.
package httpd
