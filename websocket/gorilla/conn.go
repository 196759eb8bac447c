package gorilla

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/websocket"
)

// Conn is a WebSocket connection with gorilla/websocket's blocking API,
// served on one of gale's loops: the loop reads its frames and queues
// them for ReadMessage and NextReader, which block until a message (or a
// piece of one) is there; writes go to the loop's queue and block only
// while more than a bound is queued for the peer.
//
// As with gorilla, a connection takes one concurrent reader (the
// goroutine that calls NextReader, ReadMessage, ReadJSON, SetReadDeadline,
// SetReadLimit, and the handlers those run) and one concurrent writer
// (NextWriter, WriteMessage, WriteJSON, WritePreparedMessage,
// SetWriteDeadline, EnableWriteCompression, SetCompressionLevel); Close,
// WriteControl and the handler setters are safe from any goroutine. A
// read that failed leaves the connection unusable for reading: every
// later read returns the same error.
type Conn struct {
	ws     atomic.Pointer[websocket.Conn] // set by Upgrade or Dial, or by the first callback
	server bool
	sub    string
	local  net.Addr
	remote net.Addr

	in        inbox
	readLimit atomic.Int64 // 0: none
	loopMsgN  int64        // the bytes of the message being received; loop-owned
	loopDrop  bool         // the read limit was passed: the loop queues nothing more

	// Reader-owned.
	readErr      error
	readErrCount int
	reader       *messageReader
	msgN         int64
	timer        *time.Timer

	hmu    sync.Mutex // guards the handlers
	closeH func(code int, text string) error
	pingH  func(appData string) error
	pongH  func(appData string) error

	// Writer-owned, but for writeDeadline, which WriteControl reads.
	writeDeadline atomic.Int64 // Unix ns; 0: none
	writeErr      error
	writer        *messageWriter
	writeBufSize  int
}

// newConn returns a Conn whose gale connection comes later (setWS).
func newConn(server bool, sub string, writeBufSize int) *Conn {
	if writeBufSize <= 0 {
		writeBufSize = defaultWriteBufferSize
	}
	c := &Conn{server: server, sub: sub, writeBufSize: writeBufSize}
	c.in.wake = make(chan struct{}, 1)
	return c
}

const defaultWriteBufferSize = 4096

// setWS records ws as c's connection, once.
func (c *Conn) setWS(ws *websocket.Conn) { c.ws.CompareAndSwap(nil, ws) }

// Subprotocol returns the subprotocol agreed on in the handshake, or "".
func (c *Conn) Subprotocol() string { return c.sub }

// Close closes the connection without a close frame, as gorilla's Close
// closes its net.Conn (send one first with WriteControl(CloseMessage,
// ...) or WriteMessage): what was written goes out first, then the TCP
// connection's end (websocket.Conn.Hangup). A read blocked in
// ReadMessage or NextReader returns at once, after the messages already
// received, with an error matching net.ErrClosed. Safe from any
// goroutine.
func (c *Conn) Close() error {
	ws := c.ws.Load()
	c.in.push(ws, item{kind: itemEnd, err: &net.OpError{Op: "read", Net: "tcp", Source: c.local, Addr: c.remote, Err: net.ErrClosed}})
	return ws.Hangup()
}

// LocalAddr returns the local network address.
func (c *Conn) LocalAddr() net.Addr { return c.local }

// RemoteAddr returns the peer's network address.
func (c *Conn) RemoteAddr() net.Addr { return c.remote }

// NetConn returns a net.Conn that stands for the connection, which gale's
// loop owns (there is no socket to read or write beside it): its
// addresses are the connection's, its Close is Conn.Close, its deadline
// setters are Conn's, and its Read and Write fail with
// errors.ErrUnsupported.
func (c *Conn) NetConn() net.Conn { return (*netConn)(c) }

// UnderlyingConn returns NetConn's net.Conn.
//
// Deprecated: Use NetConn, as gorilla says.
func (c *Conn) UnderlyingConn() net.Conn { return c.NetConn() }

// CloseHandler returns the handler of the close frame; see
// SetCloseHandler.
func (c *Conn) CloseHandler() func(code int, text string) error {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.closeH == nil {
		return c.defaultCloseHandler
	}
	return c.closeH
}

// SetCloseHandler sets the handler the reader runs when it reaches the
// peer's close frame, before its read returns the *CloseError; nil
// restores the default. The loop has already answered the close frame
// (RFC 6455 §5.5.1 requires it, and gale does it whatever the handler):
// the default handler's echo, a WriteControl of the close frame, then
// fails with ErrCloseSent, which it ignores, as gorilla's ignores its
// error.
func (c *Conn) SetCloseHandler(h func(code int, text string) error) {
	c.hmu.Lock()
	c.closeH = h
	c.hmu.Unlock()
}

func (c *Conn) defaultCloseHandler(code int, text string) error {
	msg := FormatCloseMessage(code, "")
	if code == CloseNoStatusReceived {
		msg = nil
	}
	c.WriteControl(CloseMessage, msg, time.Now().Add(time.Second))
	return nil
}

// PingHandler returns the handler of pings; see SetPingHandler.
func (c *Conn) PingHandler() func(appData string) error {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.pingH == nil {
		return defaultPingHandler
	}
	return c.pingH
}

// SetPingHandler sets the handler the reader runs for each ping it
// reaches; nil restores the default. Unlike gorilla's, the pong is not
// the handler's to send: gale's loop answers every ping as it arrives,
// whatever the handler, so the default handler does nothing, and one
// that writes a pong sends a second (which RFC 6455 §5.5.3 allows).
func (c *Conn) SetPingHandler(h func(appData string) error) {
	c.hmu.Lock()
	c.pingH = h
	c.hmu.Unlock()
}

func defaultPingHandler(string) error { return nil }

// PongHandler returns the handler of pongs; see SetPongHandler.
func (c *Conn) PongHandler() func(appData string) error {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	if c.pongH == nil {
		return defaultPongHandler
	}
	return c.pongH
}

// SetPongHandler sets the handler the reader runs for each pong it
// reaches (on the reading goroutine, from NextReader, ReadMessage or a
// message reader's Read, as gorilla does), nil for the default, which
// does nothing. The usual keepalive, a pong handler that extends the read
// deadline, works as with gorilla.
func (c *Conn) SetPongHandler(h func(appData string) error) {
	c.hmu.Lock()
	c.pongH = h
	c.hmu.Unlock()
}

func defaultPongHandler(string) error { return nil }

// EnableWriteCompression is accepted and ignored: a connection that
// negotiated compression compresses the messages of at least 64 bytes
// (websocket.Options.CompressionThreshold).
func (c *Conn) EnableWriteCompression(enable bool) {}

// SetCompressionLevel checks level as gorilla does (flate.HuffmanOnly,
// -2, to flate.BestCompression, 9) and then ignores it: gale compresses
// at flate.BestSpeed, gorilla's default.
func (c *Conn) SetCompressionLevel(level int) error {
	if level < -2 || level > 9 {
		return errInvalidCompressionLevel
	}
	return nil
}
