package websocket

import (
	"errors"
	"io"
	"slices"
)

// NextWriter opens a stream: a message of type typ sent in fragments,
// one per Write (compressed as one deflate stream, flushed at each Write,
// when permessage-deflate is on), ended by Close. The writer is for one
// goroutine; the connection stays safe from any.
//
// Neither NextWriter nor the stream ever waits, and no writer waits for
// the stream: a message written on the connection while it is open
// (WriteMessage, WritePrepared, Broadcast, or another stream) is held,
// whole, and goes out after the stream's last fragment, in the order the
// writes were made; control frames go out at once, between fragments. A
// stream opened while another is open is held the same way: its Writes
// gather its fragments, which go out when its turn comes. Held messages
// count against Options.MaxQueued, so a stream left open holds the
// connection's later messages back until the queue is full: close it
// promptly.
//
// Each Write queues like WriteMessage, and fails with ErrQueueFull when
// the queue is full; the stream is then over (Close returns the error).
// With Options.DropWhenFull the connection stays only if none of the
// message's fragments went out: a message cut short cannot be followed
// by another, so then the connection is closed, as without it. When the
// connection ends (a close frame sent, CloseNow, the peer gone) the
// stream ends with it, held messages are dropped, and Write and Close
// fail as WriteMessage does (ErrCloseSent or net.ErrClosed).
func (c *Conn) NextWriter(typ MessageType) (io.WriteCloser, error) {
	if typ != TextMessage && typ != BinaryMessage {
		return nil, errMessageType
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.writableLocked(); err != nil {
		return nil, err
	}
	s := &stream{c: c, op: typ}
	if pmd := c.deflate(); pmd != nil {
		s.z = newDeflateStream(c.cfg.CompressionLevel, pmd.outBits)
	}
	if r := c.rareLocked(); r.live == nil {
		r.live = s
	} else {
		r.held = append(r.held, heldMsg{s: s})
	}
	return s, nil
}

// stream is NextWriter's writer. It is live (c.rare.live) while its
// frames go out as written, held (in c.rare.held) while another stream
// is live, and neither once it ended or failed.
type stream struct {
	c      *Conn
	op     MessageType // the next frame's opcode: the type, then continuation
	z      *deflateStream
	err    error // the first failure: every later Write returns it
	closed bool  // Close was called

	// While the stream is held, under c.wmu:
	held  []heldFrame // its frames so far
	ended bool        // its last frame is in held
}

var errStreamClosed = errors.New("websocket: write to a closed message writer")

// Write sends p as a fragment of the message.
func (s *stream) Write(p []byte) (int, error) {
	if s.closed {
		return 0, errStreamClosed
	}
	if s.err != nil {
		return 0, s.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	s.err = s.frame(false, p)
	if s.err != nil {
		return 0, s.err
	}
	s.c.cfg.stats.bytesOut.Add(uint64(len(p)))
	return len(p), nil
}

// Close sends the message's last fragment and lets the messages held
// behind it go out.
func (s *stream) Close() error {
	if s.closed {
		return errStreamClosed
	}
	s.closed = true
	if s.err != nil {
		return s.err // frame dealt with the failure
	}
	err := s.frame(true, nil)
	if err == nil {
		s.c.cfg.stats.msgsOut.Add(1)
	}
	return err
}

// frame writes, or holds, one fragment holding p (compressed when the
// stream is); a failure ends the stream.
func (s *stream) frame(fin bool, p []byte) error {
	c := s.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	begun := s.op == continuation // a frame was made: if live, it went out
	err := s.frameLocked(fin, p)
	if err != nil {
		s.failLocked(err, begun)
	}
	return err
}

// frameLocked makes a fragment and writes it when the stream is live, or
// holds it. The last one ends the stream. c.wmu is held.
func (s *stream) frameLocked(fin bool, p []byte) error {
	c := s.c
	if err := c.writableLocked(); err != nil {
		return err
	}
	r := c.rare.Load() // made by NextWriter
	live := r.live == s
	// The cap applies to what is queued ahead of the frame: for a live
	// stream, not what is held behind it, which cannot go before it ends.
	// The last frame is a few bytes, and ends what holds others back: the
	// cap does not apply to it.
	ahead := c.ec().OutboundBuffered()
	if !live {
		ahead = c.queuedLocked()
	}
	if !fin && ahead >= c.cfg.MaxQueued {
		return c.queueFullLocked()
	}
	rsv1 := s.z != nil && s.op != continuation
	payload := p
	var z *buf
	if s.z != nil {
		z = getBuf(len(p)/2 + 64)
		if fin {
			z.b = s.z.finish(z.b)
		} else {
			z.b = s.z.write(z.b, p)
		}
		payload = z.b
	}
	var err error
	if live {
		err = c.writeFrameLocked(fin, rsv1, s.op, payload)
	} else {
		f := c.makeFrame(fin, rsv1, s.op, payload)
		s.held = append(s.held, f)
		r.heldN += len(f.b)
	}
	putBuf(z)
	s.op = continuation
	switch {
	case err != nil || !fin:
	case live:
		c.endStreamLocked()
	default:
		s.ended = true
	}
	return err
}

// failLocked ends a stream that failed with err: held, it is dropped;
// live, it ends, unless some of it went out (begun) and the connection
// is still writable: a message cut short cannot be followed by another,
// so the connection is then cut. c.wmu is held.
func (s *stream) failLocked(err error, begun bool) {
	if s.z != nil {
		s.z.release()
	}
	c := s.c
	r := c.rare.Load()
	switch {
	case r.live == s && begun && c.writableLocked() == nil:
		c.cutLocked(err)
	case r.live == s:
		c.endStreamLocked()
	default:
		if i := slices.IndexFunc(r.held, func(h heldMsg) bool { return h.s == s }); i >= 0 {
			r.heldN -= r.held[i].release()
			r.held = slices.Delete(r.held, i, i+1)
		}
	}
}

// releaseHeld puts back the buffers of the frames s holds and returns
// how many bytes they held. c.wmu is held.
func (s *stream) releaseHeld() int {
	n := 0
	for _, f := range s.held {
		n += f.release()
	}
	s.held = nil
	return n
}
