package websocket

import (
	"unicode/utf8"

	"github.com/galeio/gale/engine"
)

// reader is the loop's frame parser state: the data frame whose payload
// is being read, and the message it belongs to. Control frames are read
// whole (at most 127 bytes), so they need no state here.
type reader struct {
	remaining  int64       // the data frame's payload bytes still to come
	msg        *buf        // the message so far (compressed, if it is); nil when none
	mask       [4]byte     // the data frame's key
	maskPos    uint8       // where in mask the next payload byte is
	inFrame    bool        // a data frame's payload is being read
	fin        bool        // the data frame ends its message
	typ        MessageType // the message's type; 0 between messages
	compressed bool        // the message has RSV1 (permessage-deflate)
	closing    bool        // a close frame was received: input is ignored
	utf8       utf8State   // a text message's validation so far
	eof        bool        // the peer's stream ended: OnClose gets io.EOF for want of another reason
	pinged     bool        // keepalive's ping went out, and nothing came since (see keepalive.go)
}

// onData parses what in holds and hands whole messages to the handler
// (or, for a StreamHandler, pieces: see onStreamData). It consumes every
// byte of every whole frame, and every payload byte of a data frame
// begun, so the engine only ever holds a partial header or control frame
// for it (or, once a StreamHandler paused reading, what it had received).
func (c *Conn) onData(in *engine.Inbound) engine.Action {
	if c.closeWait {
		c.extendCloseWait()
	} else if c.keepalive() && in.Len() > 0 {
		c.rearmKeepalive()
	}
	if c.cfg.stream != nil {
		return c.onStreamData(in)
	}
	for in.Len() > 0 {
		if c.rd.closing {
			in.Discard(in.Len())
			return engine.None
		}
		if c.rd.inFrame {
			if err := c.readPayload(in); err != nil {
				return c.fail(err)
			}
			if c.rd.inFrame {
				return engine.None // the payload's rest is to come
			}
			continue
		}
		act, more := c.readFrame(in)
		if act != engine.None || !more {
			return act
		}
	}
	return engine.None
}

// readFrame reads the frame at the start of in: a control frame when it is
// whole, a data frame's header (and its payload, when it is all there and
// makes a message on its own). more is false when in holds too little.
func (c *Conn) readFrame(in *engine.Inbound) (act engine.Action, more bool) {
	b := in.Bytes()
	h, ok, err := parseHeader(b)
	if err != nil {
		return c.fail(err), false
	}
	if !ok {
		return engine.None, false
	}
	if err := c.check(&h); err != nil {
		return c.fail(err), false
	}
	if isControl(h.op) {
		end := h.size + int(h.length)
		if len(b) < end {
			return engine.None, false
		}
		p := b[h.size:end]
		if h.masked {
			maskBytes(h.mask, 0, p)
		}
		act := c.control(h.op, p)
		in.Discard(end)
		return act, true
	}
	in.Discard(h.size)
	if h.fin && h.op != continuation && !h.rsv1 && int64(in.Len()) >= h.length && c.cfg.stream == nil {
		return c.wholeMessage(h, in), true // the common case: no copy
	}
	if err := c.beginFrame(&h, in.Len()); err != nil {
		return c.fail(err), false
	}
	return engine.None, true
}

// check applies RFC 6455 §5's rules to a frame's header.
func (c *Conn) check(h *header) error {
	switch {
	case h.rsv23:
		return protocolErr("reserved bits RSV2/RSV3 set")
	case !knownOp(h.op):
		return protocolErr("reserved opcode")
	case h.masked != (c.role == server): // §5.1
		return protocolErr("frame masked wrongly for its direction")
	case isControl(h.op) && (!h.fin || h.length > maxControl):
		return protocolErr("control frame fragmented or over 125 bytes")
	case h.rsv1 && (c.deflate() == nil || h.op == continuation || isControl(h.op)):
		return protocolErr("RSV1 set without permessage-deflate on a message's first frame")
	case h.op == continuation && c.rd.typ == 0:
		return protocolErr("continuation frame without a message begun")
	case !isControl(h.op) && h.op != continuation && c.rd.typ != 0:
		return protocolErr("new message before the last one ended")
	}
	if !isControl(h.op) && h.length > int64(c.cfg.ReadLimit)-c.msgLen() { // (a sum could overflow)
		return ErrReadLimit
	}
	return nil
}

// msgLen is the length of the message so far, as sent.
func (c *Conn) msgLen() int64 {
	if c.rd.msg == nil {
		if c.cfg.stream != nil && c.rd.typ != 0 {
			return c.rare.Load().in.wire
		}
		return 0
	}
	return int64(len(c.rd.msg.b))
}

// wholeMessage delivers a message that is one uncompressed frame, all in
// in, from in's own bytes.
func (c *Conn) wholeMessage(h header, in *engine.Inbound) engine.Action {
	p := in.Bytes()[:h.length]
	if h.masked {
		maskBytes(h.mask, 0, p)
	}
	if h.op == TextMessage && !utf8.Valid(p) {
		return c.fail(invalidUTF8())
	}
	c.cfg.stats.received(len(p))
	c.callMessage(h.op, p)
	in.Discard(int(h.length))
	return engine.None
}

// beginFrame sets up the reading of a data frame's payload (and ends the
// message at once for an empty final frame); arrived is how many bytes
// follow its header already. A new message gets room for those, not for
// the length its header declares: a peer that declares a large frame and
// sends a byte of it holds a byte's worth (readPayload makes room as the
// rest arrives).
func (c *Conn) beginFrame(h *header, arrived int) error {
	r := &c.rd
	if h.op != continuation {
		r.typ, r.compressed, r.utf8 = h.op, h.rsv1, utf8State{}
		if c.cfg.stream != nil {
			c.beginStream(h)
		} else if r.msg == nil {
			r.msg = getBuf(int(min(h.length, int64(arrived), maxPooled)))
		}
	}
	r.inFrame, r.fin, r.remaining = true, h.fin, h.length
	r.mask, r.maskPos = h.mask, 0
	if !h.masked {
		r.mask = [4]byte{}
	}
	if h.length == 0 {
		r.inFrame = false
		switch {
		case !h.fin:
		case c.cfg.stream != nil:
			return c.endStream()
		default:
			return c.endMessage()
		}
	}
	return nil
}

// readPayload takes what in has of the data frame's payload.
func (c *Conn) readPayload(in *engine.Inbound) error {
	r := &c.rd
	p := in.Bytes()
	if int64(len(p)) > r.remaining {
		p = p[:r.remaining]
	}
	r.maskPos = uint8(maskBytes(r.mask, int(r.maskPos), p))
	if r.typ == TextMessage && !r.compressed && !r.utf8.feed(p) {
		return invalidUTF8()
	}
	r.msg.b = append(room(r.msg.b, len(p), r.remaining, r.fin), p...)
	in.Discard(len(p))
	r.remaining -= int64(len(p))
	if r.remaining > 0 {
		return nil
	}
	r.inFrame = false
	if r.fin {
		return c.endMessage()
	}
	return nil
}

// room returns b with room for n more bytes. Growing, it at least
// doubles b's capacity (from 512): what the message holds stays within
// twice what arrived, whatever its header declared. In the message's last
// frame it gives no more than the frame's remaining bytes. (Capped so in
// every frame, a message of small fragments grew by a fragment at a time,
// each growth a copy of the whole: 4 MiB in 64-byte fragments took 20 s.)
func room(b []byte, n int, remaining int64, last bool) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	size := max(2*cap(b), 512, len(b)+n)
	if last {
		size = int(min(int64(size), int64(len(b))+remaining))
	}
	grown := make([]byte, len(b), size)
	copy(grown, b)
	return grown
}

// endMessage delivers the message now whole.
func (c *Conn) endMessage() error {
	r := &c.rd
	typ, data := r.typ, r.msg.b
	var out *buf
	if r.compressed {
		out = getBuf(min(4*len(data)+64, maxPooled))
		b, err := c.deflate().inflate(out.b, data, c.cfg.ReadLimit)
		if err != nil {
			putBuf(out)
			return err
		}
		out.b, data = b, b
		if typ == TextMessage && !utf8.Valid(data) {
			putBuf(out)
			return invalidUTF8()
		}
	} else if typ == TextMessage && !r.utf8.done() {
		return invalidUTF8()
	}
	msg := r.msg
	r.msg, r.typ, r.compressed = nil, 0, false
	c.cfg.stats.received(len(data))
	c.callMessage(typ, data)
	putBuf(out)
	putBuf(msg)
	return nil
}

func protocolErr(reason string) error { return &ProtocolError{StatusProtocolError, reason} }

func invalidUTF8() error {
	return &ProtocolError{StatusInvalidFramePayload, "invalid UTF-8 in a text message"}
}
