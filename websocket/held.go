package websocket

import (
	"net"
	"slices"
)

// Messages behind a stream.
//
// A stream's fragments go out as they are written, and no other message
// may go out between them (RFC 6455 §5.4: only control frames may). A
// writer that comes while a stream is open does not wait for it, which
// on a loop would stall every connection of the loop for as long as
// another goroutine keeps the stream open: it makes its whole frame at
// once (compressed and masked as it would be sent) and holds it behind
// the stream, in the order the writers took wmu. A stream opened while
// another is open is held the same way, its fragments gathering in it.
// When the live stream ends, what is held goes out, up to the first held
// stream still open, which becomes the live one. Held bytes count against
// Options.MaxQueued with the engine's queue. When the connection ends (a
// close frame sent, CloseNow, a write that finds the queue full, OnClose)
// what is held is dropped and every later write fails.

// heldFrame is a frame made before its turn: in a pooled buffer of its
// own, or else a PreparedMessage's frame, which is shared and never
// changes.
type heldFrame struct {
	b   []byte
	own *buf // b's buffer, put back once b is sent or dropped; nil when b is shared
}

// heldMsg is a message begun while a stream was open: a whole frame, or a
// stream, whose frames gather in it (stream.held) until its turn.
type heldMsg struct {
	f heldFrame
	s *stream
}

// makeFrame returns a frame made whole, to be held. c.wmu is held.
func (c *Conn) makeFrame(fin, rsv1 bool, op MessageType, payload []byte) heldFrame {
	f := getBuf(maxHeader + len(payload))
	f.b = c.appendFrame(f.b, fin, rsv1, op, payload)
	return heldFrame{b: f.b, own: f}
}

// streamingLocked reports whether a stream is open and sending: messages
// then wait behind it. c.wmu is held.
func (c *Conn) streamingLocked() bool {
	r := c.rare.Load()
	return r != nil && r.live != nil
}

// holdLocked holds the whole message f behind the live stream. c.wmu is
// held.
func (c *Conn) holdLocked(f heldFrame) {
	r := c.rare.Load()
	r.held = append(r.held, heldMsg{f: f})
	r.heldN += len(f.b)
}

// queuedLocked returns the bytes queued for the peer: the engine's and
// those held behind a stream. c.wmu is held.
func (c *Conn) queuedLocked() int {
	n := c.ec().OutboundBuffered()
	if r := c.rare.Load(); r != nil {
		n += r.heldN
	}
	return n
}

// writableLocked returns why no frame may be written any more, or nil.
// c.wmu is held.
func (c *Conn) writableLocked() error {
	switch {
	case c.closeSent:
		return ErrCloseSent
	case c.closed:
		return net.ErrClosed
	}
	return nil
}

// endStreamLocked ends the live stream, whose last frame was written (or
// none of whose frames was): what is held behind it goes out, in one
// write, up to and with the frames of the first held stream still open,
// which becomes the live one. c.wmu is held.
func (c *Conn) endStreamLocked() {
	r := c.rare.Load()
	r.live = nil
	var vec [][]byte
	n := 0
	for n < len(r.held) && r.live == nil {
		h := &r.held[n]
		n++
		if h.s == nil {
			vec = append(vec, h.f.b)
			continue
		}
		for _, f := range h.s.held {
			vec = append(vec, f.b)
		}
		if !h.s.ended {
			r.live = h.s
		}
	}
	if len(vec) > 0 {
		// A failure ends the connection (the engine's errors do), or
		// leaves it in the write deadline's hands: nothing to undo.
		c.ec().Writev(vec)
	}
	for i := range n {
		r.heldN -= r.held[i].release()
	}
	r.held = slices.Delete(r.held, 0, n)
}

// dropHeldLocked drops what is held behind a stream, and the stream: the
// connection ends. c.wmu is held.
func (c *Conn) dropHeldLocked() {
	r := c.rare.Load()
	if r == nil {
		return
	}
	for i := range r.held {
		r.held[i].release()
	}
	clear(r.held)
	r.held, r.heldN, r.live = nil, 0, nil
}

// endLocked marks the connection ended: what is held is dropped, and
// every later write fails with net.ErrClosed. c.wmu is held.
func (c *Conn) endLocked() {
	c.closed = true
	c.dropHeldLocked()
}

// release puts back h's buffers (a held stream's frames) and returns how
// many bytes they held.
func (h *heldMsg) release() int {
	if h.s == nil {
		return h.f.release()
	}
	return h.s.releaseHeld()
}

// release puts back f's buffer, if it owns one, and returns its length.
func (f heldFrame) release() int {
	putBuf(f.own)
	return len(f.b)
}
