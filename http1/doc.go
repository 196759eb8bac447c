// Package http1 serves HTTP/1.x with any net/http Handler from gale's
// event loops.
//
// A Server looks and behaves like net/http's: the same fields where they
// exist (Handler, TLSConfig, the timeouts, MaxHeaderBytes, ErrorLog,
// ConnState, BaseContext, ConnContext), Serve, ListenAndServe,
// ListenAndServeTLS, Shutdown and Close, and handlers that get a real
// *http.Request and an http.ResponseWriter that implements http.Flusher,
// http.Hijacker and what http.ResponseController asks for.
//
// What differs is the cost of a connection. By default (ModeLoop) every
// connection is served by an engine loop: request heads are framed on the
// loop as they arrive, with no goroutine per connection, and parsed there
// once whole; only a request whose head is complete takes a goroutine,
// kept for reuse, for as long as its handler runs. No request waits for
// another's handler: by default there is no cap on handlers, as net/http
// has none; MaxHandlers sets one, beyond which a request is answered 503
// at once. An idle keep-alive connection costs its socket and about a
// kilobyte. Request bodies stream: the loop hands the handler's
// Body.Read what arrives, in a buffer that grows with it, and stops
// reading the socket while BodyBufferSize bytes (nearly) wait unread; a
// handler
// writing to a client that does not read waits in Write. ModeMixed
// serves connections with net/http's own goroutine per connection while
// fewer than MixedThreshold are open, and with the loops beyond.
//
// Request heads are parsed by net/http's own parser (http.ReadRequest),
// with the checks net/http's server adds (Host, header names and values,
// the protocol version), so what a handler is given, and what is refused
// with which status, is net/http's; bodies (Content-Length and chunked,
// with trailers) are framed by this package's incremental decoder, which
// follows net/http's rules. ARCHITECTURE.md lists where the two differ and
// why.
package http1
