package gorilla

import (
	"errors"
	"io"
	"time"

	"github.com/galeio/gale/websocket"
)

// Writes queue on the loop, which sends as the peer reads; a writer
// waits before writing while writeHigh bytes or more are queued, so that
// a peer that does not read holds a writer back (as gorilla's blocked
// write does) instead of growing the queue. gale's own cap, maxQueued,
// is above that, so a write never meets websocket.ErrQueueFull: a
// connection holds at most writeHigh plus the message being written.
const (
	writeHigh = 256 << 10
	maxQueued = 1 << 20
)

// The bounds of the wait for the queue to drain, which polls
// Conn.Buffered: gale has no drain callback, and a wait is rare (a peer
// slower than the writer).
const (
	pollMin = 20 * time.Microsecond
	pollMax = 5 * time.Millisecond
)

var errInvalidCompressionLevel = errors.New("websocket: invalid compression level")

// SetWriteDeadline sets the time after which a write that waits for the
// peer (while writeHigh bytes are queued for it) fails with a timeout,
// which is final, as with gorilla: every later write fails. The zero
// time means none.
func (c *Conn) SetWriteDeadline(t time.Time) error {
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	c.writeDeadline.Store(ns)
	return nil
}

// waitWritable waits until fewer than writeHigh bytes are queued for the
// peer, until the write deadline.
func (c *Conn) waitWritable() error {
	if c.writeErr != nil {
		return c.writeErr
	}
	ws := c.ws.Load()
	wait := pollMin
	for ws.Buffered() >= writeHigh {
		if dl := c.writeDeadline.Load(); dl != 0 && time.Now().UnixNano() >= dl {
			c.writeErr = errWriteTimeout
			return c.writeErr
		}
		time.Sleep(wait)
		wait = min(2*wait, pollMax)
	}
	return nil
}

// WriteMessage writes data as one message of type messageType. A data
// message (TextMessage, BinaryMessage) is queued whole for the loop to
// send; a control one (CloseMessage, PingMessage, PongMessage) is
// WriteControl's with the write deadline. It returns once data is queued
// (data may then be reused), waiting first while the peer has writeHigh
// bytes to read, until the write deadline.
func (c *Conn) WriteMessage(messageType int, data []byte) error {
	switch messageType {
	case TextMessage, BinaryMessage:
	case CloseMessage, PingMessage, PongMessage:
		return c.writeControl(messageType, data)
	default:
		return errBadWriteOpCode
	}
	if c.writer != nil {
		c.writer.Close() // as gorilla: a new message ends the one open
	}
	if err := c.waitWritable(); err != nil {
		return err
	}
	return c.ws.Load().WriteMessage(websocket.MessageType(messageType), data)
}

// WriteControl writes a control frame: CloseMessage (a payload from
// FormatCloseMessage, which starts the close handshake: later writes fail
// with ErrCloseSent), PingMessage or PongMessage, with at most 125 bytes
// of data. It never waits (the frame goes out ahead of queued messages),
// so deadline only fails it when already passed. An empty close payload
// is sent as CloseNormalClosure (gale sends no empty close frame), and a
// code RFC 6455 forbids sending is refused. Safe from any goroutine.
func (c *Conn) WriteControl(messageType int, data []byte, deadline time.Time) error {
	if !deadline.IsZero() && time.Until(deadline) < 0 {
		return errWriteTimeout
	}
	return c.writeControl(messageType, data)
}

func (c *Conn) writeControl(messageType int, data []byte) error {
	if len(data) > 125 {
		return errInvalidControlFrame
	}
	ws := c.ws.Load()
	switch messageType {
	case CloseMessage:
		code, reason := parseClosePayload(data)
		return ws.Close(code, reason)
	case PingMessage, PongMessage:
		return ws.WriteControl(websocket.MessageType(messageType), data)
	}
	return errBadWriteOpCode
}

// NextWriter returns a writer of the next message, TextMessage or
// BinaryMessage, which the writer's Close ends. Its bytes go out in
// frames of the write buffer's size (Upgrader's or Dialer's
// WriteBufferSize, 4 KiB by default), each waiting as WriteMessage does;
// a message shorter than that goes as one frame. A writer left open is
// closed by the next NextWriter or WriteMessage.
func (c *Conn) NextWriter(messageType int) (io.WriteCloser, error) {
	if messageType != TextMessage && messageType != BinaryMessage {
		return nil, errBadWriteOpCode
	}
	if c.writer != nil {
		c.writer.Close()
	}
	if c.writeErr != nil {
		return nil, c.writeErr
	}
	w := &messageWriter{c: c, typ: websocket.MessageType(messageType)}
	c.writer = w
	return w, nil
}

// messageWriter is NextWriter's writer. It gathers up to the write
// buffer's size, then sends what it holds as a fragment of a gale
// stream, made on its first fragment.
type messageWriter struct {
	c      *Conn
	typ    websocket.MessageType
	buf    []byte
	s      io.WriteCloser // nil until the message needs more than one frame
	err    error
	closed bool
}

func (w *messageWriter) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errWriteClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	n := len(p)
	for len(p) > 0 {
		room := w.c.writeBufSize - len(w.buf)
		if room == 0 {
			if err := w.flush(); err != nil {
				return n - len(p), err
			}
			continue
		}
		k := min(room, len(p))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
	}
	return n, nil
}

// WriteString writes s, as Write.
func (w *messageWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// flush sends what the writer holds as a fragment.
func (w *messageWriter) flush() error {
	if err := w.c.waitWritable(); err != nil {
		w.err = err
		return err
	}
	if w.s == nil {
		s, err := w.c.ws.Load().NextWriter(w.typ)
		if err != nil {
			w.err = err
			return err
		}
		w.s = s
	}
	_, w.err = w.s.Write(w.buf)
	w.buf = w.buf[:0]
	return w.err
}

// Close sends the message's end: all of it as one frame if it fits in
// the write buffer.
func (w *messageWriter) Close() error {
	if w.closed {
		return errWriteClosed
	}
	w.closed = true
	if w.c.writer == w {
		w.c.writer = nil
	}
	if w.err != nil {
		return w.err
	}
	if w.s == nil {
		if err := w.c.waitWritable(); err != nil {
			return err
		}
		return w.c.ws.Load().WriteMessage(w.typ, w.buf)
	}
	if len(w.buf) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	return w.s.Close()
}

// WritePreparedMessage writes pm, waiting as WriteMessage does.
func (c *Conn) WritePreparedMessage(pm *PreparedMessage) error {
	if pm.control {
		return c.writeControl(pm.typ, pm.data)
	}
	if c.writer != nil {
		c.writer.Close()
	}
	if err := c.waitWritable(); err != nil {
		return err
	}
	return c.ws.Load().WritePrepared(pm.pm)
}

// PreparedMessage is a message encoded once, and compressed once, for
// many connections; safe for concurrent use.
type PreparedMessage struct {
	typ     int
	data    []byte
	control bool
	pm      *websocket.PreparedMessage
}

// NewPreparedMessage prepares data, which it keeps (do not change it
// after), as a message of type messageType.
func NewPreparedMessage(messageType int, data []byte) (*PreparedMessage, error) {
	switch messageType {
	case CloseMessage, PingMessage, PongMessage:
		return &PreparedMessage{typ: messageType, data: data, control: true}, nil
	}
	pm, err := websocket.NewPreparedMessage(websocket.MessageType(messageType), data)
	if err != nil {
		return nil, err
	}
	return &PreparedMessage{typ: messageType, data: data, pm: pm}, nil
}
