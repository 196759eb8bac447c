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
// is at least Options.CompressionThreshold long. It never waits for the
// peer: the frame is written at once as far as the socket takes it and
// the rest is queued (see Options.MaxQueued), so data may be reused as
// soon as it returns. Safe from any goroutine; messages written
// concurrently go out one after another, whole. It waits only for a
// stream another goroutine has open on the connection (see NextWriter).
// Text is not checked for UTF-8: sending valid text is the caller's part.
func (c *Conn) WriteMessage(typ MessageType, data []byte) error {
	if typ != TextMessage && typ != BinaryMessage {
		return errMessageType
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.waitStreamLocked(); err != nil {
		return err
	}
	return c.writeDataLocked(true, typ, data, c.compresses(len(data)))
}

// WriteControl sends a control frame: PingMessage or PongMessage with at
// most 125 bytes of data (use Close for a close frame). Control frames
// may go out between the fragments of a streamed message. Safe from any
// goroutine.
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
// with code and reason (at most 123 bytes of UTF-8), after which no
// message may be written, and the connection closes when the peer's close
// frame comes back, or after Options.CloseTimeout. Safe from any
// goroutine; it does not wait. OnClose gets the peer's answer as a
// *CloseError. A second Close returns ErrCloseSent.
func (c *Conn) Close(code StatusCode, reason string) error {
	if !code.sendable() || len(reason) > maxControl-2 || !utf8.ValidString(reason) {
		return errors.New("websocket: Close with an invalid code or reason")
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

// writeControl writes a ping or pong frame.
func (c *Conn) writeControl(typ MessageType, data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return ErrCloseSent
	}
	return c.writeFrameLocked(true, false, typ, data)
}

// writeCloseLocked writes a close frame with payload; nothing may follow.
func (c *Conn) writeCloseLocked(payload []byte) error {
	c.closeSent = true
	return c.writeFrameLocked(true, false, CloseMessage, payload)
}

// waitStreamLocked waits for a stream another goroutine has open to end,
// and checks that messages may still be sent. c.wmu is held (and dropped
// while waiting).
func (c *Conn) waitStreamLocked() error {
	for r := c.rare.Load(); r != nil && r.stream != nil; {
		end := r.stream
		c.wmu.Unlock()
		<-end
		c.wmu.Lock()
	}
	if c.closeSent {
		return ErrCloseSent
	}
	return nil
}

// compresses reports whether a message of n bytes goes compressed.
func (c *Conn) compresses(n int) bool {
	return c.pmd != nil && n >= c.cfg.CompressionThreshold
}

// writeDataLocked writes a data frame, compressing its payload first if
// deflate is set, after checking the queue's cap. c.wmu is held.
func (c *Conn) writeDataLocked(fin bool, op MessageType, data []byte, deflate bool) error {
	if c.ec().OutboundBuffered() >= c.cfg.MaxQueued {
		return c.queueFullLocked()
	}
	if !deflate {
		return c.writeFrameLocked(fin, false, op, data)
	}
	z := getBuf(len(data)/2 + 64)
	z.b = compress(z.b, data, c.cfg.CompressionLevel, c.pmd.outBits)
	err := c.writeFrameLocked(fin, true, op, z.b)
	putBuf(z)
	return err
}

// queueFullLocked applies Options.DropWhenFull to a write that found the
// queue full.
func (c *Conn) queueFullLocked() error {
	if !c.cfg.DropWhenFull {
		if r := c.rareLocked(); r.closeErr == nil {
			r.closeErr = ErrQueueFull
		}
		c.ec().Abort()
	}
	return ErrQueueFull
}

// largeFrame is the payload size from which a server's frame is written
// from the caller's slice (writev) rather than copied behind its header.
const largeFrame = 16 << 10

// writeFrameLocked writes one frame. A server's large payload goes from
// the caller's slice; otherwise the frame is built whole (a client's is
// masked with a fresh key, §5.3) and written at once. The engine copies
// what the socket does not take, so the bytes are free on return.
func (c *Conn) writeFrameLocked(fin, rsv1 bool, op MessageType, payload []byte) error {
	var err error
	if c.role == server && len(payload) >= largeFrame {
		var hdr [maxHeader]byte
		vec := [2][]byte{appendHeader(hdr[:0], fin, rsv1, op, len(payload), nil), payload}
		_, err = c.ec().Writev(vec[:])
		return err
	}
	f := getBuf(maxHeader + len(payload))
	if c.role == server {
		f.b = appendHeader(f.b, fin, rsv1, op, len(payload), nil)
		f.b = append(f.b, payload...)
	} else {
		var key [4]byte
		k := rand.Uint32()
		key[0], key[1], key[2], key[3] = byte(k), byte(k>>8), byte(k>>16), byte(k>>24)
		f.b = appendHeader(f.b, fin, rsv1, op, len(payload), &key)
		start := len(f.b)
		f.b = append(f.b, payload...)
		maskBytes(key, 0, f.b[start:])
	}
	_, err = c.ec().Write(f.b)
	putBuf(f)
	return err
}
