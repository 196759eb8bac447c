package h2frame

import (
	"encoding/binary"
	"fmt"
)

// HeaderLen is the size of a frame header.
const HeaderLen = 9

// Type is a frame's type.
type Type uint8

// The frame types of RFC 9113 §6.
const (
	TypeData         Type = 0x0
	TypeHeaders      Type = 0x1
	TypePriority     Type = 0x2
	TypeRSTStream    Type = 0x3
	TypeSettings     Type = 0x4
	TypePushPromise  Type = 0x5
	TypePing         Type = 0x6
	TypeGoAway       Type = 0x7
	TypeWindowUpdate Type = 0x8
	TypeContinuation Type = 0x9
)

// Flags are a frame's flags; their meaning depends on its type.
type Flags uint8

// The flags of RFC 9113 §6.
const (
	FlagEndStream  Flags = 0x1  // DATA, HEADERS
	FlagAck        Flags = 0x1  // SETTINGS, PING
	FlagEndHeaders Flags = 0x4  // HEADERS, PUSH_PROMISE, CONTINUATION
	FlagPadded     Flags = 0x8  // DATA, HEADERS, PUSH_PROMISE
	FlagPriority   Flags = 0x20 // HEADERS
)

// Has reports whether f includes every flag of g.
func (f Flags) Has(g Flags) bool { return f&g == g }

// Header is a frame's header.
type Header struct {
	Length   uint32 // of the payload, 24 bits
	Type     Type
	Flags    Flags
	StreamID uint32 // 31 bits; the reserved bit is dropped
}

// ReadHeader decodes the frame header at the start of b; it reports
// false when b holds less than HeaderLen bytes.
func ReadHeader(b []byte) (Header, bool) {
	if len(b) < HeaderLen {
		return Header{}, false
	}
	return Header{
		Length:   uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:     Type(b[3]),
		Flags:    Flags(b[4]),
		StreamID: binary.BigEndian.Uint32(b[5:9]) & (1<<31 - 1),
	}, true
}

// AppendTo appends h in wire form to b.
func (h Header) AppendTo(b []byte) []byte {
	b = append(b, byte(h.Length>>16), byte(h.Length>>8), byte(h.Length), byte(h.Type), byte(h.Flags))
	return binary.BigEndian.AppendUint32(b, h.StreamID&(1<<31-1))
}

// Frame is one frame: its header and its payload, which aliases the
// buffer Next was given.
type Frame struct {
	Header
	Payload []byte
}

// Next returns the frame at the start of b and its size on the wire, or
// n == 0 when b does not hold all of it yet. A frame longer than
// maxSize (SETTINGS_MAX_FRAME_SIZE, as the receiver announced it) is a
// FRAME_SIZE_ERROR of the connection (§4.2), reported as soon as its
// header is there.
func Next(b []byte, maxSize uint32) (f Frame, n int, err error) {
	h, ok := ReadHeader(b)
	if !ok {
		return Frame{}, 0, nil
	}
	if h.Length > maxSize {
		return Frame{}, 0, connError(ErrCodeFrameSize, "a %v frame of %d bytes, over the %d announced", h.Type, h.Length, maxSize)
	}
	end := HeaderLen + int(h.Length)
	if len(b) < end {
		return Frame{}, 0, nil
	}
	return Frame{Header: h, Payload: b[HeaderLen:end:end]}, end, nil
}

func (t Type) String() string {
	names := [...]string{"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS", "PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"}
	if int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("UNKNOWN_FRAME_TYPE_%d", uint8(t))
}
