package websocket

// Handler receives a connection's events. Every callback runs on the
// connection's loop, one at a time per connection: a callback that blocks
// stalls every connection of its loop, so run the callbacks on a pool
// (Options.Pool: in order per connection, off the loop), or hand long
// work to another goroutine (which may write to the connection: writes
// are safe from any goroutine). (The exception: a connection that ends while its callbacks
// wait for the HTTP handler gets OnOpen and OnClose on a goroutine of
// their own; see Upgrader.Upgrade.) Embed BaseHandler to implement only
// some callbacks.
//
// A Handler may also implement PingHandler, PongHandler and
// StreamHandler.
type Handler interface {
	// OnOpen runs once, when the connection is established, before any
	// other callback; for a connection Upgrade returned, once the HTTP
	// handler has called SetContext or returned (see Upgrade). Writes
	// made in it go out first.
	OnOpen(c *Conn)
	// OnMessage runs for each whole message: typ is TextMessage (data is
	// valid UTF-8) or BinaryMessage. data is decompressed and unmasked,
	// and valid only during the call: copy what must outlive it.
	OnMessage(c *Conn, typ MessageType, data []byte)
	// OnClose runs once, when the connection has closed. err is a
	// *CloseError when the peer sent a close frame (CloseStatus reads its
	// code; Reason has its reason), net.ErrClosed after CloseNow, and
	// otherwise why it ended: ErrReadLimit, a *ProtocolError,
	// ErrCloseTimeout, io.EOF or io.ErrUnexpectedEOF when the peer went
	// without a close frame, a deadline or network error.
	OnClose(c *Conn, err error)
}

// StreamHandler is implemented by a Handler that takes messages in
// pieces as they arrive, for messages too large to hold whole: its
// OnMessage is then never called. Each message gets one OnMessageStart,
// then OnMessageData calls, the last with final set. A piece is what a
// receive brought of a frame's payload (uncompressed), or at most
// 16 KiB of a compressed message's decompressed bytes; chunk may be
// empty (a final call may bring nothing more), and is valid only during
// the call. The pieces are unmasked and decompressed, and a text
// message's are valid UTF-8 so far (a character may be split between two
// pieces); Options.ReadLimit caps their total, and a message that breaks
// a rule (too long, invalid UTF-8) closes the connection before the piece
// that broke it is delivered, without a final call. So does the
// connection's end mid-message: OnClose follows. Control frames between
// a message's fragments are handled as they come, OnPing and OnPong
// between two pieces.
//
// Conn.PauseRead called in OnMessageData (or from any goroutine) stops
// the pieces at once: no more is delivered, and no more read from the
// peer, until ResumeRead. While a message streams, the connection holds
// at most a partial frame header and, for a compressed message, a
// pooled decompressor (about 44 KiB), a 16 KiB output piece and the
// coroutine that decompresses (see Limits in the package doc).
type StreamHandler interface {
	// OnMessageStart begins a message of type typ, TextMessage or
	// BinaryMessage.
	OnMessageStart(c *Conn, typ MessageType)
	// OnMessageData brings the message's next piece; final marks its
	// last.
	OnMessageData(c *Conn, chunk []byte, final bool)
}

// PingHandler is implemented by a Handler that wants to see pings. The
// pong that answers each is queued before OnPing runs, whatever it does.
// data is valid only during the call.
type PingHandler interface {
	OnPing(c *Conn, data []byte)
}

// PongHandler is implemented by a Handler that wants to see pongs (the
// answers to Conn.WriteControl(PingMessage, ...), or unsolicited ones).
// data is valid only during the call.
type PongHandler interface {
	OnPong(c *Conn, data []byte)
}

// BaseHandler implements Handler with callbacks that do nothing.
type BaseHandler struct{}

// OnOpen does nothing.
func (BaseHandler) OnOpen(*Conn) {}

// OnMessage does nothing.
func (BaseHandler) OnMessage(*Conn, MessageType, []byte) {}

// OnClose does nothing.
func (BaseHandler) OnClose(*Conn, error) {}
