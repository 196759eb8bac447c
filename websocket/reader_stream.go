package websocket

import "github.com/galeio/gale/engine"

// Reading in pieces, for a StreamHandler: the frames are parsed as for
// OnMessage (reader.go), but a data frame's payload goes to the handler
// as it arrives, from the engine's own bytes, unmasked in place; a
// compressed message's, through an inflateStream. Nothing of a message
// is kept once delivered: what the connection holds while a message
// streams is what the engine keeps of a partial frame header (or of a
// control frame, at most 131 bytes) and, for a compressed message, its
// inflateStream.

// streamIn is the state of the message being read in pieces. It lives in
// connRare, made at the connection's first such message; loop-owned.
type streamIn struct {
	wire int64          // the message's payload bytes read so far, as sent (compressed, if it is): ReadLimit's count at each frame header
	out  int64          // the bytes delivered so far: ReadLimit's count for a compressed message
	inf  *inflateStream // a compressed message's decompression; nil otherwise
}

// onStreamData is onData for a StreamHandler. It stops, leaving the rest
// of in to the engine, once the handler called PauseRead; ResumeRead's
// Wake brings it back.
func (c *Conn) onStreamData(in *engine.Inbound) engine.Action {
	for {
		switch {
		case c.rd.closing:
			in.Discard(in.Len())
			return engine.None
		case c.readHeld():
			in.PauseRead() // at once: the posted one may come after another receive
			return engine.None
		case c.inflating():
			// A compressed message's last piece was given, and PauseRead
			// stopped its output: deliver the rest.
			if _, err := c.inflatePieces(c.rare.Load().in, nil, true); err != nil {
				return c.fail(err)
			}
			continue
		case in.Len() == 0:
			return engine.None
		case c.rd.inFrame:
			if err := c.streamPayload(in); err != nil {
				return c.fail(err)
			}
			continue
		}
		act, more := c.readFrame(in)
		if act != engine.None || !more {
			return act
		}
	}
}

// readHeld reports whether PauseRead stopped the pieces.
func (c *Conn) readHeld() bool {
	r := c.rare.Load()
	return r != nil && r.readHeld.Load()
}

// streamState returns the connection's streamIn, made on first need.
func (c *Conn) streamState() *streamIn {
	if r := c.rare.Load(); r != nil && r.in != nil {
		return r.in
	}
	c.wmu.Lock()
	r := c.rareLocked()
	c.wmu.Unlock()
	if r.in == nil {
		r.in = new(streamIn)
	}
	return r.in
}

// inflating reports whether a compressed message has had all its payload
// but not yet ended: output PauseRead held back is still to come.
func (c *Conn) inflating() bool {
	if c.rd.typ == 0 || c.rd.inFrame || !c.rd.compressed {
		return false
	}
	s := c.rare.Load().in
	return s.inf != nil && s.inf.last
}

// beginStream starts a message for the StreamHandler.
func (c *Conn) beginStream(h *header) {
	s := c.streamState()
	*s = streamIn{}
	if h.rsv1 {
		var dict []byte
		if pmd := c.deflate(); pmd.inTakeover && pmd.win != nil {
			dict = pmd.win.bytes()
		}
		s.inf = newInflateStream(dict)
	}
	c.callStart(h.op)
}

// streamPayload delivers what in has of the data frame's payload; it
// stops short once the handler called PauseRead.
func (c *Conn) streamPayload(in *engine.Inbound) error {
	r := &c.rd
	s := c.rare.Load().in
	p := in.Bytes()
	if int64(len(p)) > r.remaining {
		p = p[:r.remaining]
	}
	last := r.fin && int64(len(p)) == r.remaining
	used := len(p)
	var err error
	if s.inf != nil {
		used, err = c.inflatePieces(s, p, last)
	} else {
		r.maskPos = uint8(maskBytes(r.mask, int(r.maskPos), p))
		err = c.deliverPiece(s, p, last)
	}
	if err != nil {
		return err
	}
	in.Discard(used)
	s.wire += int64(used)
	r.remaining -= int64(used)
	if r.remaining == 0 {
		r.inFrame = false
	}
	return nil
}

// endStream ends a message whose last frame is empty.
func (c *Conn) endStream() error {
	s := c.rare.Load().in
	if s.inf != nil && s.wire == 0 {
		// A compressed message without even a block header: empty (as
		// inflate has it).
		s.inf.release()
		s.inf = nil
	}
	if s.inf != nil {
		_, err := c.inflatePieces(s, nil, true)
		return err
	}
	return c.deliverPiece(s, nil, true)
}

// inflatePieces gives s's decompressor p, payload of the current frame,
// last when it ends the message, and delivers the pieces it makes until
// it needs more input, the message ends, or the handler called
// PauseRead. It returns how many bytes of p were read.
func (c *Conn) inflatePieces(s *streamIn, p []byte, last bool) (int, error) {
	r := &c.rd
	f := s.inf
	f.give(p, r.mask, int(r.maskPos), last)
	for !c.readHeld() {
		piece, done, err := f.pull()
		switch {
		case err != nil:
			return 0, err
		case done:
			f.take(p)
			if !last {
				return len(p), nil // DEFLATE data ended early: the rest is ignored
			}
			return len(p), c.deliverPiece(s, nil, true)
		case piece == nil:
			used, pos := f.take(p)
			r.maskPos = uint8(pos)
			return used, nil
		}
		if err := c.deliverPiece(s, piece, false); err != nil {
			return 0, err
		}
	}
	used, pos := f.take(p)
	r.maskPos = uint8(pos)
	return used, nil
}

// deliverPiece hands the handler the message's next piece once it has
// passed the message's checks: ReadLimit on the total, and UTF-8 for a
// text message. The final piece ends the message.
func (c *Conn) deliverPiece(s *streamIn, p []byte, final bool) error {
	r := &c.rd
	if int64(len(p)) > int64(c.cfg.ReadLimit)-s.out {
		return ErrReadLimit
	}
	if r.typ == TextMessage && (!r.utf8.feed(p) || final && !r.utf8.done()) {
		return invalidUTF8()
	}
	s.out += int64(len(p))
	if pmd := c.deflate(); s.inf != nil && pmd.inTakeover && pmd.win != nil {
		pmd.win.add(p)
	}
	if final {
		r.typ, r.compressed = 0, false
		if s.inf != nil {
			s.inf.release()
			s.inf = nil
		}
		c.cfg.stats.received(int(s.out))
	}
	c.callPiece(p, final)
	return nil
}

// releaseStream gives back a message's decompressor when the connection
// ends mid-message.
func (c *Conn) releaseStream() {
	if r := c.rare.Load(); r != nil && r.in != nil && r.in.inf != nil {
		r.in.inf.release()
		r.in.inf = nil
	}
}
