package websocket

import (
	"compress/flate"
	"time"

	"github.com/galeio/gale/engine"
)

// Options are the settings an Upgrader and a Dialer share. The zero
// value is usable once Handler is set.
type Options struct {
	// Handler receives the connections' events. Required.
	Handler Handler

	// ReadLimit caps a message's size, after decompression: a larger one
	// closes the connection with StatusMessageTooBig (OnClose gets
	// ErrReadLimit). For a StreamHandler it caps the total of a message's
	// pieces, which are not held: it may then be raised as far as the
	// messages a server must take. Default DefaultReadLimit.
	ReadLimit int

	// MaxQueued caps the bytes queued for a connection and not yet sent,
	// the messages held behind an open stream included (see NextWriter):
	// a write (WriteMessage, a stream's Write, WritePrepared, Broadcast)
	// that finds this many already queued ahead of it fails with
	// ErrQueueFull. What then happens is DropWhenFull's choice. Writes
	// never wait for a slow peer: below the cap they queue, and the
	// connection's loop sends them as the peer reads. (An open stream's
	// fragments are not charged for the messages held behind it, which
	// cannot go before them: while a stream is open, up to twice
	// MaxQueued may be queued.) Default DefaultMaxQueued.
	MaxQueued int
	// DropWhenFull keeps a connection whose queue is full open, dropping
	// only the message that did not fit (a live feed's choice: the peer
	// misses updates but stays); a stream some of whose fragments went
	// out cannot be dropped, and closes the connection as without
	// DropWhenFull. By default the connection is closed
	// instead, at once, without a close frame (it could not be sent), and
	// OnClose gets ErrQueueFull: a peer that does not read cannot hold
	// memory.
	DropWhenFull bool

	// Compression negotiates permessage-deflate (RFC 7692); see
	// CompressionMode. Default CompressionDisabled.
	Compression CompressionMode
	// CompressionLevel is the flate level of outgoing messages, from
	// flate.HuffmanOnly to flate.BestCompression. Default flate.BestSpeed.
	CompressionLevel int
	// CompressionThreshold: messages shorter than this are sent
	// uncompressed (compressing them gains too little). Default 64.
	CompressionThreshold int

	// CloseTimeout bounds the close handshake: how long a connection that
	// sent a close frame waits for the peer's before it closes anyway
	// (OnClose then gets ErrCloseTimeout), and how long one that the peer
	// ended (a close frame, a protocol error, the end of its stream) waits
	// for its queued output to be written before it is cut: a peer that
	// does not read holds neither for longer. Default 5 s.
	CloseTimeout time.Duration

	// PingInterval turns keepalive on: a connection whose peer has sent
	// nothing (no frame, no byte) for PingInterval is sent a ping, and
	// one that then hears nothing from its peer for PongTimeout is cut.
	// Any input counts, not only a pong: a peer busy sending a large
	// message, its pong queued behind it, is alive. What this end writes
	// does not count (a dead peer's kernel may still have taken it).
	// Keepalive runs on the connection's read deadline, a timer of its
	// loop: it costs no goroutine and no runtime timer, and each receive
	// re-arms the deadline (a task posted to the loop, and a few small
	// allocations: docs/bench/websocket-keepalive.md). Server and client
	// connections alike; it begins once the connection opens, and stops
	// when its close handshake begins (CloseTimeout bounds that). A
	// connection whose reading is paused (PauseRead, or the engine's
	// WriteHighWater) for longer than PingInterval and PongTimeout hears
	// nothing from its peer and is cut too. An engine whose Options set
	// CloseOnDeadline closes the connection when its first ping is due
	// instead. Default 0: off, as with gorilla's and net/http's
	// connections.
	PingInterval time.Duration
	// PongTimeout is how long a connection that pinged its peer (see
	// PingInterval) waits for any input before it gives the peer up: it
	// is then cut at once, without a close frame, and OnClose gets
	// ErrPongTimeout. No close handshake is tried: the peer is presumed
	// gone, a close frame would wait behind output it does not read, and
	// waiting CloseTimeout for its answer would hold the connection for
	// nothing. A peer still there sees the connection reset without a
	// close frame: 1006 (StatusAbnormalClosure) by RFC 6455 §7.1.5. A
	// silent peer is so cut PingInterval+PongTimeout after its last byte
	// (and the loop's timer slack, a few milliseconds). Default
	// PingInterval.
	PongTimeout time.Duration

	// Engine runs the connections that are not already on gale's loops:
	// those a Dialer dials, and those an Upgrader takes over from a
	// net/http server (which hands them over by Hijack). It must come from
	// NewEngine. Default: one engine for the whole program, started on
	// first use (with engine.Options' defaults) and never stopped.
	Engine *engine.Engine

	// Pool, if not nil, runs the Handler's callbacks (OnOpen, OnMessage,
	// OnPing, OnPong, a StreamHandler's OnMessageStart and OnMessageData,
	// OnClose) on the pool's goroutines instead of the loop, in order per
	// connection and never two at once for one connection, so that a
	// callback may block without stalling the other connections of its
	// loop. Frames are still read, checked and answered (pongs, close
	// frames) on the loop; a message's bytes are copied for its callback,
	// and while engine.PoolOptions.MaxQueued bytes of a connection's
	// calls wait for the pool (their payloads, and 64 for each call, so
	// that empty messages and pings count too), its loop stops reading
	// it. See
	// "Callbacks on a pool" in the package documentation. One pool may
	// serve several Upgraders, Dialers and engines; close it after them.
	Pool *engine.Pool
}

// CompressionMode says whether connections compress their messages.
type CompressionMode uint8

const (
	// CompressionDisabled neither offers nor accepts permessage-deflate.
	CompressionDisabled CompressionMode = iota
	// CompressionEnabled negotiates permessage-deflate without context
	// takeover on the incoming side: the peer compresses each message on
	// its own, so a connection keeps no compression state between
	// messages, and costs nothing for it. (The outgoing side never
	// refers back to earlier messages, whatever is negotiated: that is
	// always valid, and keeps no state either.) Compressors and
	// decompressors are pooled, shared by every connection.
	CompressionEnabled
	// CompressionContextTakeover also accepts the peer's context
	// takeover, which compresses repetitive streams of small messages
	// better: each connection then keeps the last 2^window-bits bytes it
	// received (32 KiB unless the peer agreed to less) for as long as it
	// lives.
	CompressionContextTakeover
)

// The defaults of Options.
const (
	DefaultReadLimit = 1 << 20
	DefaultMaxQueued = 1 << 20
)

const (
	defaultCloseTimeout = 5 * time.Second
	defaultThreshold    = 64
)

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.ReadLimit <= 0 {
		o.ReadLimit = DefaultReadLimit
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultMaxQueued
	}
	if o.CompressionLevel == 0 {
		o.CompressionLevel = flate.BestSpeed
	}
	if o.CompressionThreshold <= 0 {
		o.CompressionThreshold = defaultThreshold
	}
	if o.CloseTimeout <= 0 {
		o.CloseTimeout = defaultCloseTimeout
	}
	if o.PingInterval < 0 {
		o.PingInterval = 0
	}
	if o.PongTimeout <= 0 {
		o.PongTimeout = o.PingInterval
	}
	return o
}
