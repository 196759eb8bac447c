package engine

import "time"

// Action tells the engine what to do after a callback.
type Action int

const (
	// None continues as usual.
	None Action = iota
	// Close closes the connection, after writing what it has queued.
	Close
	// Shutdown shuts the engine down gracefully (see Engine.Shutdown).
	Shutdown
)

// Handler receives a connection's events. Every callback runs on the
// connection's loop goroutine; a callback that blocks stalls every
// connection of that loop, so run the callbacks on a Pool
// (Options.Pool: in order per connection, off the loop), or hand long
// work to another goroutine (and come back with Conn.Write or
// Conn.Execute). A callback that panics
// ends its connection, and only it (see Options.CrashOnPanic).
//
// Embed BaseHandler to implement only the callbacks you need.
type Handler interface {
	// OnBoot runs once, after Start, on loop 0.
	OnBoot(e *Engine) Action
	// OnShutdown runs once, when the engine has stopped.
	OnShutdown(e *Engine)
	// OnOpen runs when a connection is accepted, dialed or adopted. out is
	// written to it first.
	OnOpen(c *Conn) (out []byte, action Action)
	// OnData runs when bytes arrived, or when Wake was called. in holds
	// every byte not yet consumed, and is valid only during the call:
	// bytes the callback does not consume are kept for the next call.
	OnData(c *Conn, in *Inbound) Action
	// OnDeadline runs when a deadline set with SetDeadline,
	// SetReadDeadline or SetWriteDeadline passes; err matches
	// os.ErrDeadlineExceeded. With Options.CloseOnDeadline the connection
	// is then closed whatever the action.
	OnDeadline(c *Conn, err error) Action
	// OnClose runs once when the connection is closed; err is nil for a
	// local Close, io.EOF when the peer closed, and otherwise the reason.
	OnClose(c *Conn, err error)
	// OnTick runs on loop 0, first right after OnBoot, then after each
	// returned delay; a delay <= 0 stops the ticks.
	OnTick() (delay time.Duration, action Action)
}

// Drainer is implemented by a Handler that wants a word with each
// connection before a graceful Shutdown closes it: OnDrain runs on the
// connection's loop once the engine has stopped accepting, and what it
// writes is sent before the connection closes (with a nil error). A
// connection accepted while Shutdown begins gets OnOpen, then OnDrain.
// Each loop runs its connections' OnDrain when Shutdown's task reaches it,
// so a connection of one loop may close (and its OnClose run) before
// another loop's OnDrain: a handler that announces departures should know
// shutdown has begun from its first OnDrain. Stop, which closes everything
// at once, calls no OnDrain.
type Drainer interface {
	OnDrain(c *Conn)
}

// HalfCloser is implemented by a Handler that goes on writing to a
// connection whose peer has closed its sending side (shutdown(SHUT_WR)):
// an HTTP server answering a request whose client half-closed after
// sending it. OnEOF runs on the connection's loop when the end of the
// peer's stream is read, after OnData had every byte before it; nothing
// more will be read. With None the connection stays open, for writing,
// until the handler closes it (or a deadline or timeout does); with Close
// it closes after its queued output, as it does for a Handler that is no
// HalfCloser, whose OnClose then gets io.EOF. A TLS connection whose
// handshake has not ended is closed without OnEOF.
type HalfCloser interface {
	OnEOF(c *Conn) Action
}

// LimitHandler is implemented by a Handler that wants a word with a
// connection one of the engine's limits is about to close, to say why in
// its protocol (an error reply, a status): OnLimit runs on the
// connection's loop with the limit's error, and what it writes goes out,
// after the output queued before it, as the connection closes
// gracefully; OnClose then gets the same error. The limit so reported
// is Options.MaxInputBuffer's (ErrInputBufferFull): the input that
// passed it is dropped, and nothing more is read. (Idle timeouts say
// goodbye through OnDeadline; a connection that passed MaxWriteBuffer
// cannot be written to.)
type LimitHandler interface {
	OnLimit(c *Conn, err error)
}

// BaseHandler implements Handler with callbacks that do nothing; OnData
// discards what it is given, and OnTick asks for no ticks.
type BaseHandler struct{}

// OnBoot returns None.
func (BaseHandler) OnBoot(*Engine) Action { return None }

// OnShutdown does nothing.
func (BaseHandler) OnShutdown(*Engine) {}

// OnOpen returns nil, None.
func (BaseHandler) OnOpen(*Conn) ([]byte, Action) { return nil, None }

// OnData discards in.
func (BaseHandler) OnData(_ *Conn, in *Inbound) Action {
	in.Discard(in.Len())
	return None
}

// OnDeadline returns None.
func (BaseHandler) OnDeadline(*Conn, error) Action { return None }

// OnClose does nothing.
func (BaseHandler) OnClose(*Conn, error) {}

// OnTick returns 0: no ticks.
func (BaseHandler) OnTick() (time.Duration, Action) { return 0, None }
