package websocket

import "encoding/binary"

// Frame header bits (RFC 6455 §5.2).
const (
	finBit   = 0x80
	rsv1Bit  = 0x40 // "per-message compressed" under permessage-deflate (RFC 7692 §6)
	rsv23    = 0x30
	opBits   = 0x0f
	maskBit  = 0x80
	len7Bits = 0x7f

	continuation MessageType = 0

	// maxControl is the longest control frame payload (§5.5).
	maxControl = 125
	// maxHeader is the longest frame header: 2 bytes, 8 of length, 4 of
	// mask.
	maxHeader = 14
)

// header is a parsed frame header.
type header struct {
	fin, rsv1 bool
	rsv23     bool // RSV2 or RSV3: no extension we agree to uses them
	op        MessageType
	masked    bool
	mask      [4]byte
	length    int64
	size      int // the header's bytes
}

// parseHeader parses the frame header at the start of b. ok is false if b
// holds only part of it; err reports a length no frame may have.
func parseHeader(b []byte) (h header, ok bool, err error) {
	if len(b) < 2 {
		return h, false, nil
	}
	b0, b1 := b[0], b[1]
	h.fin, h.rsv1, h.rsv23 = b0&finBit != 0, b0&rsv1Bit != 0, b0&rsv23 != 0
	h.op = MessageType(b0 & opBits)
	h.masked = b1&maskBit != 0
	h.size = 2
	switch n := b1 & len7Bits; n {
	case 126:
		h.size += 2
	case 127:
		h.size += 8
	default:
		h.length = int64(n)
	}
	if h.masked {
		h.size += 4
	}
	if len(b) < h.size {
		return h, false, nil
	}
	switch h.size - 2 - maskLen(h.masked) {
	case 2:
		h.length = int64(binary.BigEndian.Uint16(b[2:]))
	case 8:
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 { // §5.2: the most significant bit MUST be 0
			return h, false, &ProtocolError{StatusProtocolError, "frame length with its top bit set"}
		}
		h.length = int64(u)
	}
	if h.masked {
		copy(h.mask[:], b[h.size-4:h.size])
	}
	return h, true, nil
}

func maskLen(masked bool) int {
	if masked {
		return 4
	}
	return 0
}

// appendHeader appends a frame header to dst; mask is nil for a server's
// (unmasked) frame.
func appendHeader(dst []byte, fin, rsv1 bool, op MessageType, length int, mask *[4]byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= finBit
	}
	if rsv1 {
		b0 |= rsv1Bit
	}
	var b1 byte
	if mask != nil {
		b1 = maskBit
	}
	switch {
	case length <= 125:
		dst = append(dst, b0, b1|byte(length))
	case length <= 0xffff:
		dst = append(dst, b0, b1|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(length))
	default:
		dst = append(dst, b0, b1|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(length))
	}
	if mask != nil {
		dst = append(dst, mask[:]...)
	}
	return dst
}

// isControl reports whether op is a control frame's opcode.
func isControl(op MessageType) bool { return op&0x8 != 0 }

// knownOp reports whether op is defined by RFC 6455.
func knownOp(op MessageType) bool {
	switch op {
	case continuation, TextMessage, BinaryMessage, CloseMessage, PingMessage, PongMessage:
		return true
	}
	return false
}
