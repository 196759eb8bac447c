package websocket

import (
	"errors"
	"io"
)

// WriteMessage sends data as one message of type typ (TextMessage or
// BinaryMessage), compressed if permessage-deflate was agreed on and data
// is at least Options.CompressionThreshold long. It never waits for the
// peer: the frame is written at once as far as the socket takes it and
// the rest is queued (see Options.MaxQueued), so data may be reused as
// soon as it returns. Safe from any goroutine; messages written
// concurrently go out one after another, whole. It waits only for a
// stream another goroutine has open on the connection (see NextWriter).
func (c *Conn) WriteMessage(typ MessageType, data []byte) error {
	return errors.ErrUnsupported
}

// WriteControl sends a control frame: PingMessage or PongMessage with at
// most 125 bytes of data (use Close for a close frame). Control frames
// may go out between the fragments of a streamed message. Safe from any
// goroutine.
func (c *Conn) WriteControl(typ MessageType, data []byte) error {
	return errors.ErrUnsupported
}

// NextWriter opens a stream: a message of type typ sent in fragments,
// one per Write (each compressed on its own flush when permessage-deflate
// is on), ended by Close. Until then, other writers of messages on the
// connection wait; control frames do not. The writer is for one
// goroutine. Each Write queues like WriteMessage, never waiting for the
// peer, and fails with ErrQueueFull when the queue is full.
func (c *Conn) NextWriter(typ MessageType) (io.WriteCloser, error) {
	return nil, errors.ErrUnsupported
}

// Close starts the closing handshake (RFC 6455 §7): it sends a close frame
// with code and reason (at most 123 bytes), after which no message may be
// written, and the connection closes when the peer's close frame comes
// back, or after Options.CloseTimeout. Safe from any goroutine; it does
// not wait. OnClose gets the peer's answer as a *CloseError.
func (c *Conn) Close(code StatusCode, reason string) error {
	return errors.ErrUnsupported
}
