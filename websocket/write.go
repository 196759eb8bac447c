package websocket

import (
	"errors"
	"math/rand/v2"
	"unicode/utf8"

	"github.com/galeio/gale/engine"
)

// errMessageType is returned for a type a method does not send.
var errMessageType = errors.New("websocket: wrong message type for this method")

// WriteMessage sends data as one message of type typ (TextMessage or
// BinaryMessage), compressed if permessage-deflate was agreed on and data
// is at least Options.CompressionThreshold long. It never waits, neither
// for the peer nor for another writer's stream: the frame is written at
// once as far as the socket takes it and the rest is queued (see
// Options.MaxQueued), or, while a stream is open (see NextWriter), held
// whole to follow it (and dropped if the connection ends first); so data
// may be reused as soon as it returns. Safe from any goroutine, callbacks
// included; messages written concurrently go out one after another,
// whole, in the order their calls were made. Once a close frame was sent
// it fails with ErrCloseSent, and once the connection has ended otherwise
// with an error matching net.ErrClosed. Text is not checked for UTF-8:
// sending valid text is the caller's part.
func (c *Conn) WriteMessage(typ MessageType, data []byte) error {
	if typ != TextMessage && typ != BinaryMessage {
		return errMessageType
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.writableLocked(); err != nil {
		return err
	}
	err := c.writeDataLocked(typ, data, c.compresses(len(data)))
	if err == nil {
		c.cfg.stats.sent(len(data))
	}
	return err
}

// WriteControl sends a control frame: PingMessage or PongMessage with at
// most 125 bytes of data (use Close for a close frame). It goes out at
// once, between the fragments of an open stream and ahead of the
// messages held behind it. Safe from any goroutine; it never waits.
func (c *Conn) WriteControl(typ MessageType, data []byte) error {
	if typ != PingMessage && typ != PongMessage {
		return errMessageType
	}
	if len(data) > maxControl {
		return errors.New("websocket: control frame data over 125 bytes")
	}
	return c.writeControl(typ, data)
}

// Close starts the closing handshake (RFC 6455 §7): it sends a close frame
// with code and reason (at most 123 bytes of UTF-8), after which every
// write fails with ErrCloseSent, and the connection closes when the
// peer's close frame comes back, or after Options.CloseTimeout. The close
// frame goes out at once, even in the middle of a stream: the stream then
// ends unfinished, and the messages held behind it are dropped. Safe from
// any goroutine; it does not wait. OnClose gets the peer's answer as a
// *CloseError. A second Close returns ErrCloseSent.
func (c *Conn) Close(code StatusCode, reason string) error {
	if !code.sendable() || len(reason) > maxControl-2 || !utf8.ValidString(reason) {
		return errInvalidClose
	}
	var p [maxControl]byte
	payload := append(append(p[:0], byte(code>>8), byte(code)), reason...)
	c.wmu.Lock()
	if c.closeSent {
		c.wmu.Unlock()
		return ErrCloseSent
	}
	err := c.writeCloseLocked(payload)
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	return c.ec().Execute(func(*engine.Conn) { c.startCloseWait() })
}

// errInvalidClose refuses a close code that may not be sent (RFC 6455
// §7.4), or a reason too long or not UTF-8.
var errInvalidClose = errors.New("websocket: Close with an invalid code or reason")

// writeControl writes a ping or pong frame: at once, even between a
// stream's fragments and ahead of the messages held behind it.
func (c *Conn) writeControl(typ MessageType, data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.writableLocked(); err != nil {
		return err
	}
	return c.writeFrameLocked(true, false, typ, data)
}

// writeCloseLocked writes a close frame with payload; nothing may follow,
// so what is held behind a stream is dropped.
func (c *Conn) writeCloseLocked(payload []byte) error {
	c.closeSent = true
	c.dropHeldLocked()
	return c.writeFrameLocked(true, false, CloseMessage, payload)
}

// compresses reports whether a message of n bytes goes compressed.
func (c *Conn) compresses(n int) bool {
	return c.deflate() != nil && n >= c.cfg.CompressionThreshold
}

// writeDataLocked writes a whole message's frame, compressing its
// payload first if deflate is set, after checking the queue's cap; while
// a stream is open, the frame is held behind it. c.wmu is held.
func (c *Conn) writeDataLocked(op MessageType, data []byte, deflate bool) error {
	if c.queuedLocked() >= c.cfg.MaxQueued {
		return c.queueFullLocked()
	}
	payload := data
	var z *buf
	if deflate {
		z = getBuf(len(data)/2 + 64)
		z.b = compress(z.b, data, c.cfg.CompressionLevel, c.deflate().outBits)
		payload = z.b
	}
	var err error
	if c.streamingLocked() {
		c.holdLocked(c.makeFrame(true, deflate, op, payload))
	} else {
		err = c.writeFrameLocked(true, deflate, op, payload)
	}
	putBuf(z)
	return err
}

// queueFullLocked applies Options.DropWhenFull to a write that found the
// queue full.
func (c *Conn) queueFullLocked() error {
	if !c.cfg.DropWhenFull {
		c.cutLocked(ErrQueueFull)
	}
	return ErrQueueFull
}

// cutLocked closes the connection at once for err, which OnClose gets
// unless a reason came first. c.wmu is held.
func (c *Conn) cutLocked(err error) error {
	if r := c.rareLocked(); r.closeErr == nil {
		r.closeErr = err
	}
	c.endLocked()
	return c.ec().Abort()
}

// largeFrame is the payload size from which a server's frame is written
// from the caller's slice (writev) rather than copied behind its header.
const largeFrame = 16 << 10

// writeFrameLocked writes one frame. A server's large payload goes from
// the caller's slice; otherwise the frame is built whole (see appendFrame)
// and written at once. The engine copies what the socket does not take,
// so the bytes are free on return.
func (c *Conn) writeFrameLocked(fin, rsv1 bool, op MessageType, payload []byte) error {
	var err error
	if c.role == server && len(payload) >= largeFrame {
		var hdr [maxHeader]byte
		vec := [2][]byte{appendHeader(hdr[:0], fin, rsv1, op, len(payload), nil), payload}
		_, err = c.ec().Writev(vec[:])
		return err
	}
	f := getBuf(maxHeader + len(payload))
	f.b = c.appendFrame(f.b, fin, rsv1, op, payload)
	_, err = c.ec().Write(f.b)
	putBuf(f)
	return err
}

// appendFrame appends to dst a frame holding payload: a client's is
// masked with a fresh key (§5.3).
func (c *Conn) appendFrame(dst []byte, fin, rsv1 bool, op MessageType, payload []byte) []byte {
	if c.role == server {
		dst = appendHeader(dst, fin, rsv1, op, len(payload), nil)
		return append(dst, payload...)
	}
	var key [4]byte
	k := rand.Uint32()
	key[0], key[1], key[2], key[3] = byte(k), byte(k>>8), byte(k>>16), byte(k>>24)
	dst = appendHeader(dst, fin, rsv1, op, len(payload), &key)
	start := len(dst)
	dst = append(dst, payload...)
	maskBytes(key, 0, dst[start:])
	return dst
}
