package websocket

import "errors"

// PreparedMessage is a message encoded once for many connections: its
// frame, and its compressed frame, are made on first use and shared by
// every server-side connection it is written to. (A client's frames are
// masked, each with its own key, so they are made per connection.) It is
// immutable and safe to use from many goroutines.
type PreparedMessage struct {
	typ  MessageType
	data []byte
}

// NewPreparedMessage prepares data, which it keeps (do not change it
// after), as a message of type typ.
func NewPreparedMessage(typ MessageType, data []byte) (*PreparedMessage, error) {
	return nil, errors.ErrUnsupported
}

// WritePrepared writes pm to the connection, as WriteMessage would write
// its data.
func (c *Conn) WritePrepared(pm *PreparedMessage) error {
	return errors.ErrUnsupported
}

// Broadcast writes data as one message of type typ to every connection of
// conns, encoding (and compressing) it once, and returns how many took
// it. A connection that did not (closed, or its queue full) is dealt with
// as its own write would be (see Options.DropWhenFull); the others are
// not held back by it.
func Broadcast(conns []*Conn, typ MessageType, data []byte) int {
	return 0
}
