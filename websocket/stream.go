package websocket

import (
	"errors"
	"io"
)

// NextWriter opens a stream: a message of type typ sent in fragments,
// one per Write (compressed as one deflate stream, flushed at each Write,
// when permessage-deflate is on), ended by Close. Until then, other
// writers of messages on the connection wait; control frames do not. The
// writer is for one goroutine. Each Write queues like WriteMessage, never
// waiting for the peer, and fails with ErrQueueFull when the queue is
// full (the stream is then over: Close it).
func (c *Conn) NextWriter(typ MessageType) (io.WriteCloser, error) {
	if typ != TextMessage && typ != BinaryMessage {
		return nil, errMessageType
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.waitStreamLocked(); err != nil {
		return nil, err
	}
	c.rareLocked().stream = make(chan struct{})
	s := &stream{c: c, op: typ}
	if c.pmd != nil {
		s.z = newDeflateStream(c.cfg.CompressionLevel, c.pmd.outBits)
	}
	return s, nil
}

// stream is NextWriter's writer.
type stream struct {
	c      *Conn
	op     MessageType // the next frame's opcode: the type, then continuation
	z      *deflateStream
	err    error // the first failure: every later Write returns it
	closed bool
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
	return len(p), nil
}

// Close sends the message's last fragment and lets other writers go on.
func (s *stream) Close() error {
	if s.closed {
		return errStreamClosed
	}
	s.closed = true
	err := s.err
	if err == nil {
		err = s.frame(true, nil)
	} else if s.z != nil {
		s.z.release()
	}
	c := s.c
	c.wmu.Lock()
	r := c.rare.Load() // made by NextWriter
	close(r.stream)
	r.stream = nil
	c.wmu.Unlock()
	return err
}

// frame writes one fragment holding p (compressed when the stream is).
func (s *stream) frame(fin bool, p []byte) error {
	c := s.c
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return ErrCloseSent
	}
	if c.ec().OutboundBuffered() >= c.cfg.MaxQueued {
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
	err := c.writeFrameLocked(fin, rsv1, s.op, payload)
	putBuf(z)
	s.op = continuation
	return err
}
