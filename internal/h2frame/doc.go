// Package h2frame reads and writes HTTP/2 frames (RFC 9113 §4 and §6) in
// place, for a server that parses on its event loop: [Next] finds the
// first whole frame at the start of a buffer without copying or
// blocking, and says so when more bytes are needed; the typed accessors
// check each frame type's rules and name the error (a connection error,
// or a stream error of one stream) the peer is to be told; the Append
// functions write frames at the end of a byte slice.
//
// # Buffers
//
// A [Frame]'s Payload, and every slice an accessor returns, alias the
// buffer given to Next: they are valid until the caller reuses it.
//
// # Limitations
//
// Header blocks are not decoded here (HPACK is
// golang.org/x/net/http2/hpack's); PUSH_PROMISE is parsed only to be
// refused, as a server receives none. Frame types this package does not
// know are returned as they are, for the caller to ignore (§5.5).
package h2frame
