package httpd

import (
	"net/http"
	"time"
)

// h2limits are a server's HTTP/2 settings and bounds, from
// Server.HTTP2 and the fields HTTP/1 shares with it, fixed when the
// server starts.
type h2limits struct {
	maxStreams    uint32 // SETTINGS_MAX_CONCURRENT_STREAMS; also the cap on running handlers per connection
	maxFrame      uint32 // SETTINGS_MAX_FRAME_SIZE: the largest frame read
	decTable      uint32 // SETTINGS_HEADER_TABLE_SIZE: the decoder's table
	encTable      uint32 // the most of the peer's table size the encoder uses
	streamWindow  int32  // SETTINGS_INITIAL_WINDOW_SIZE: a request body's buffer
	connWindow    int32  // the connection's receive window: all bodies' buffers together
	maxHeaderList uint32 // SETTINGS_MAX_HEADER_LIST_SIZE
	maxFields     int    // field lines per header block (MaxHeaderValueCount)
	stall         time.Duration
}

// The defaults of the HTTP/2 settings. MaxConcurrentStreams and the
// decoder's table size are net/http's; the encoder uses no dynamic table
// (as nginx's HTTP/2 does): it would be kept by every idle connection,
// for responses whose Date and lengths change anyway, and
// MaxEncoderHeaderTableSize turns it on; the largest frame read is the protocol's
// least, 16 KiB, where net/http reads up to 1 MiB: a frame is read whole
// on the loop, so this bounds what a connection's input holds. The
// windows bound the request body bytes a connection holds unread, per
// stream and in all, as net/http's do.
const (
	h2DefaultMaxStreams   = 250
	h2DefaultMaxFrame     = 16 << 10
	h2DefaultTable        = 4096
	h2DefaultStreamWindow = 1 << 20
	h2DefaultConnWindow   = 1 << 20
	h2MaxWindow           = 1<<31 - 1
	h2InitialWindow       = 65535 // the protocol's, before SETTINGS

	// DefaultHTTP2StallTimeout bounds how long an HTTP/2 response waits
	// for a client that does not read it: a handler whose Write waits
	// longer for the client's flow-control window has its stream reset
	// (the Write fails), and a connection whose output does not move for
	// as long is closed. HTTP2.WriteByteTimeout, when set, replaces it;
	// net/http has no such bound by default.
	DefaultHTTP2StallTimeout = 30 * time.Second
)

func (s *Server) h2Limits() h2limits {
	c := s.HTTP2
	if c == nil {
		c = &http.HTTP2Config{}
	}
	l := h2limits{
		maxStreams:   h2DefaultMaxStreams,
		maxFrame:     h2DefaultMaxFrame,
		decTable:     h2DefaultTable,
		encTable:     0,
		streamWindow: h2DefaultStreamWindow,
		connWindow:   h2DefaultConnWindow,
		maxFields:    s.maxHeaderValues(),
		stall:        DefaultHTTP2StallTimeout,
	}
	if c.MaxConcurrentStreams > 0 {
		l.maxStreams = uint32(min(c.MaxConcurrentStreams, 1<<20))
	}
	if n := c.MaxReadFrameSize; n >= 16<<10 && n <= 16<<20-1 {
		l.maxFrame = uint32(n)
	}
	if n := c.MaxDecoderHeaderTableSize; n > 0 && n < 4<<20 {
		l.decTable = uint32(n)
	}
	if n := c.MaxEncoderHeaderTableSize; n > 0 && n < 4<<20 {
		l.encTable = uint32(n)
	}
	if n := c.MaxReceiveBufferPerStream; n > 0 && n < 4<<20 {
		l.streamWindow = int32(n)
	}
	if n := c.MaxReceiveBufferPerConnection; n >= 64<<10 && n < 4<<20 {
		l.connWindow = int32(n)
	}
	if c.WriteByteTimeout > 0 {
		l.stall = c.WriteByteTimeout
	}
	// net/http's: the head's bytes and some overhead for each of a
	// typical request's fields.
	n := s.MaxHeaderBytes
	if n <= 0 {
		n = http.DefaultMaxHeaderBytes
	}
	l.maxHeaderList = uint32(n + 10*32)
	return l
}

// serves reports whether the server speaks HTTP/1 (h1), HTTP/2 over TLS
// (h2) and HTTP/2 in the clear (h2c), as net/http reads its Protocols:
// HTTP/1 and HTTP/2 over TLS when nil.
func (s *Server) serves() (h1, h2, h2c bool) {
	p := s.Protocols
	if p == nil {
		return true, true, false
	}
	return p.HTTP1(), p.HTTP2(), p.UnencryptedHTTP2()
}
