package h2frame

import "encoding/binary"

// The Append functions write one frame at the end of b and return the
// extended slice. They do not check what they are given against the
// peer's settings (frame size, window): the caller does.

// AppendData appends a DATA frame, unpadded.
func AppendData(b []byte, stream uint32, endStream bool, data []byte) []byte {
	b = Header{Length: uint32(len(data)), Type: TypeData, Flags: flagIf(endStream, FlagEndStream), StreamID: stream}.AppendTo(b)
	return append(b, data...)
}

// AppendHeaders appends a HEADERS frame carrying block, a header block
// fragment, unpadded and without priority.
func AppendHeaders(b []byte, stream uint32, endStream, endHeaders bool, block []byte) []byte {
	fl := flagIf(endStream, FlagEndStream) | flagIf(endHeaders, FlagEndHeaders)
	b = Header{Length: uint32(len(block)), Type: TypeHeaders, Flags: fl, StreamID: stream}.AppendTo(b)
	return append(b, block...)
}

// AppendContinuation appends a CONTINUATION frame carrying block.
func AppendContinuation(b []byte, stream uint32, endHeaders bool, block []byte) []byte {
	b = Header{Length: uint32(len(block)), Type: TypeContinuation, Flags: flagIf(endHeaders, FlagEndHeaders), StreamID: stream}.AppendTo(b)
	return append(b, block...)
}

// AppendRSTStream appends a RST_STREAM frame.
func AppendRSTStream(b []byte, stream uint32, code ErrCode) []byte {
	b = Header{Length: 4, Type: TypeRSTStream, StreamID: stream}.AppendTo(b)
	return binary.BigEndian.AppendUint32(b, uint32(code))
}

// AppendSettings appends a SETTINGS frame of settings, or with ack an
// acknowledgement (settings must then be empty).
func AppendSettings(b []byte, ack bool, settings ...Setting) []byte {
	b = Header{Length: uint32(6 * len(settings)), Type: TypeSettings, Flags: flagIf(ack, FlagAck)}.AppendTo(b)
	for _, s := range settings {
		b = binary.BigEndian.AppendUint16(b, uint16(s.ID))
		b = binary.BigEndian.AppendUint32(b, s.Val)
	}
	return b
}

// AppendPing appends a PING frame, or with ack its answer.
func AppendPing(b []byte, ack bool, data [8]byte) []byte {
	b = Header{Length: 8, Type: TypePing, Flags: flagIf(ack, FlagAck)}.AppendTo(b)
	return append(b, data[:]...)
}

// AppendGoAway appends a GOAWAY frame.
func AppendGoAway(b []byte, last uint32, code ErrCode, debug []byte) []byte {
	b = Header{Length: uint32(8 + len(debug)), Type: TypeGoAway}.AppendTo(b)
	b = binary.BigEndian.AppendUint32(b, last&(1<<31-1))
	b = binary.BigEndian.AppendUint32(b, uint32(code))
	return append(b, debug...)
}

// AppendWindowUpdate appends a WINDOW_UPDATE frame of stream (0: the
// connection); inc must be 1 to 2^31-1.
func AppendWindowUpdate(b []byte, stream, inc uint32) []byte {
	b = Header{Length: 4, Type: TypeWindowUpdate, StreamID: stream}.AppendTo(b)
	return binary.BigEndian.AppendUint32(b, inc&(1<<31-1))
}

func flagIf(on bool, f Flags) Flags {
	if on {
		return f
	}
	return 0
}
