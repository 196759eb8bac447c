package websocket

import (
	"compress/flate"
	"sync"
)

// PreparedMessage is a message encoded once for many connections: its
// frame, and its compressed frames, are made on first use and shared by
// every server-side connection it is written to. (A client's frames are
// masked, each with its own key, so they are made per connection.) It is
// immutable and safe to use from many goroutines.
type PreparedMessage struct {
	typ  MessageType
	data []byte

	// frames by kind: plain, deflated with a 32 KiB window, deflated for
	// a peer that asked for a smaller one.
	frames [3]struct {
		once sync.Once
		b    []byte
	}
}

const (
	framePlain = iota
	frameDeflate
	frameSmallWindow
)

// NewPreparedMessage prepares data, which it keeps (do not change it
// after), as a message of type typ (TextMessage or BinaryMessage).
func NewPreparedMessage(typ MessageType, data []byte) (*PreparedMessage, error) {
	if typ != TextMessage && typ != BinaryMessage {
		return nil, errMessageType
	}
	return &PreparedMessage{typ: typ, data: data}, nil
}

// frame returns the frame of the given kind, made on first use.
func (pm *PreparedMessage) frame(kind int) []byte {
	f := &pm.frames[kind]
	f.once.Do(func() {
		payload, rsv1 := pm.data, false
		switch kind {
		case frameDeflate:
			payload, rsv1 = compress(nil, pm.data, flate.BestSpeed, 15), true
		case frameSmallWindow:
			payload, rsv1 = compress(nil, pm.data, flate.BestSpeed, 8), true
		}
		f.b = appendHeader(make([]byte, 0, maxHeader+len(payload)), true, rsv1, pm.typ, len(payload), nil)
		f.b = append(f.b, payload...)
	})
	return f.b
}

// WritePrepared writes pm to the connection, as WriteMessage would write
// its data (compressed at flate.BestSpeed, whatever the connection's
// level), and like it never waits: while a stream is open, the message is
// held behind it by reference to pm's frame, not copied.
func (c *Conn) WritePrepared(pm *PreparedMessage) error {
	if c.role == client {
		return c.WriteMessage(pm.typ, pm.data)
	}
	kind := framePlain
	if c.compresses(len(pm.data)) {
		kind = frameDeflate
		if c.deflate().outBits < 15 {
			kind = frameSmallWindow
		}
	}
	f := pm.frame(kind)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.writableLocked(); err != nil {
		return err
	}
	if c.queuedLocked() >= c.cfg.MaxQueued {
		return c.queueFullLocked()
	}
	if c.streamingLocked() {
		c.holdLocked(heldFrame{b: f})
	} else if _, err := c.ec().Write(f); err != nil {
		return err
	}
	c.cfg.stats.sent(len(pm.data))
	return nil
}

// Broadcast writes data as one message of type typ to every connection of
// conns, encoding (and compressing) it once, and returns how many took
// it. Like WritePrepared, which it calls for each, it never waits: a
// connection with a stream open holds the message behind it, and one
// that did not take it (closed, or its queue full) is dealt with as its
// own write would be (see Options.DropWhenFull); the others are not held
// back by it. Safe from any goroutine, callbacks included.
func Broadcast(conns []*Conn, typ MessageType, data []byte) int {
	pm, err := NewPreparedMessage(typ, data)
	if err != nil {
		return 0
	}
	n := 0
	for _, c := range conns {
		if c.WritePrepared(pm) == nil {
			n++
		}
	}
	return n
}
