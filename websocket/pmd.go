package websocket

// Permessage-deflate (RFC 7692) is split in four files: this one holds the
// agreement a connection keeps; pmd_negotiate.go makes it from the
// handshake's Sec-WebSocket-Extensions headers; pmd_codec.go compresses
// and decompresses messages with pooled stdlib flate state; pmd_window.go
// keeps the bytes a peer's context takeover may refer back to.
//
// Memory is the design's constraint: a stdlib flate.Writer is about 1 MB,
// so no connection owns one. Outgoing messages are always compressed on
// their own (a fresh compressor from a pool), which is valid whatever was
// agreed. Incoming messages need per-connection state only when the peer
// keeps its context (CompressionContextTakeover): then the connection
// keeps a window of at most 32 KiB, and borrows a pooled decompressor per
// message, primed with that window.

// pmdState is a connection's permessage-deflate agreement; the zero value
// is "off".
type pmdState struct {
	on         bool    // permessage-deflate was agreed on
	outBits    uint8   // window bits our compressed output may use: the peer's limit (server_max_window_bits for a server, client_max_window_bits for a client); 15 when not limited
	inTakeover bool    // the peer may refer back to earlier messages: keep win
	win        *window // the last bytes received (decompressed), only when inTakeover; nil otherwise
}

// The LZ77 window sizes RFC 7692 §7.1.2 lets the peers agree on, as
// base-2 logarithms.
const (
	minWindowBits = 8
	maxWindowBits = 15
)

// syncTail ends every sync-flushed DEFLATE stream (an empty stored block's
// LEN and NLEN). RFC 7692 §7.2.1 has the sender remove it from each
// message, and §7.2.2 the receiver put it back.
var syncTail = [4]byte{0x00, 0x00, 0xff, 0xff}
