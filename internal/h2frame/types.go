package h2frame

import "encoding/binary"

// Priority is a PRIORITY frame's content, or a HEADERS frame's with
// FlagPriority (deprecated by RFC 9113, parsed to be checked and skipped).
type Priority struct {
	Exclusive bool
	DependsOn uint32
	Weight    uint8 // the weight minus one, as on the wire
}

// unpad returns p without the padding of a frame with FlagPadded: its
// first byte is the pad length, which must leave room (§6.1, §6.2).
func (f Frame) unpad(p []byte) ([]byte, error) {
	if !f.Flags.Has(FlagPadded) {
		return p, nil
	}
	if len(p) == 0 || int(p[0]) >= len(p) {
		return nil, connError(ErrCodeProtocol, "%v frame's padding is as long as its payload", f.Type)
	}
	return p[1 : len(p)-int(p[0])], nil
}

// Data returns a DATA frame's data, its padding removed (§6.1).
func (f Frame) Data() ([]byte, error) {
	if f.StreamID == 0 {
		return nil, connError(ErrCodeProtocol, "DATA frame on stream 0")
	}
	return f.unpad(f.Payload)
}

// Headers returns a HEADERS frame's header block fragment and its
// priority, if it has one (§6.2).
func (f Frame) Headers() (block []byte, pri Priority, err error) {
	if f.StreamID == 0 {
		return nil, Priority{}, connError(ErrCodeProtocol, "HEADERS frame on stream 0")
	}
	p, err := f.unpad(f.Payload)
	if err != nil || !f.Flags.Has(FlagPriority) {
		return p, Priority{}, err
	}
	if len(p) < 5 {
		return nil, Priority{}, connError(ErrCodeFrameSize, "HEADERS frame too short for its priority")
	}
	pri = readPriority(p)
	if pri.DependsOn == f.StreamID {
		return nil, Priority{}, streamError(f.StreamID, ErrCodeProtocol, "stream depends on itself")
	}
	return p[5:], pri, nil
}

func readPriority(p []byte) Priority {
	v := binary.BigEndian.Uint32(p)
	return Priority{Exclusive: v>>31 == 1, DependsOn: v & (1<<31 - 1), Weight: p[4]}
}

// Priority returns a PRIORITY frame's content (§6.3).
func (f Frame) Priority() (Priority, error) {
	switch {
	case f.StreamID == 0:
		return Priority{}, connError(ErrCodeProtocol, "PRIORITY frame on stream 0")
	case len(f.Payload) != 5:
		return Priority{}, streamError(f.StreamID, ErrCodeFrameSize, "PRIORITY frame of %d bytes", len(f.Payload))
	}
	pri := readPriority(f.Payload)
	if pri.DependsOn == f.StreamID {
		return Priority{}, streamError(f.StreamID, ErrCodeProtocol, "stream depends on itself")
	}
	return pri, nil
}

// RSTStream returns a RST_STREAM frame's error code (§6.4).
func (f Frame) RSTStream() (ErrCode, error) {
	switch {
	case f.StreamID == 0:
		return 0, connError(ErrCodeProtocol, "RST_STREAM frame on stream 0")
	case len(f.Payload) != 4:
		return 0, connError(ErrCodeFrameSize, "RST_STREAM frame of %d bytes", len(f.Payload))
	}
	return ErrCode(binary.BigEndian.Uint32(f.Payload)), nil
}

// Ping returns a PING frame's opaque data (§6.7).
func (f Frame) Ping() (data [8]byte, err error) {
	switch {
	case f.StreamID != 0:
		return data, connError(ErrCodeProtocol, "PING frame on stream %d", f.StreamID)
	case len(f.Payload) != 8:
		return data, connError(ErrCodeFrameSize, "PING frame of %d bytes", len(f.Payload))
	}
	copy(data[:], f.Payload)
	return data, nil
}

// GoAway returns a GOAWAY frame's last stream, error code and debug
// data (§6.8).
func (f Frame) GoAway() (last uint32, code ErrCode, debug []byte, err error) {
	switch {
	case f.StreamID != 0:
		return 0, 0, nil, connError(ErrCodeProtocol, "GOAWAY frame on stream %d", f.StreamID)
	case len(f.Payload) < 8:
		return 0, 0, nil, connError(ErrCodeFrameSize, "GOAWAY frame of %d bytes", len(f.Payload))
	}
	last = binary.BigEndian.Uint32(f.Payload) & (1<<31 - 1)
	return last, ErrCode(binary.BigEndian.Uint32(f.Payload[4:])), f.Payload[8:], nil
}

// WindowUpdate returns a WINDOW_UPDATE frame's increment (§6.9). A zero
// increment is an error of the stream, or of the connection on stream 0.
func (f Frame) WindowUpdate() (uint32, error) {
	if len(f.Payload) != 4 {
		return 0, connError(ErrCodeFrameSize, "WINDOW_UPDATE frame of %d bytes", len(f.Payload))
	}
	inc := binary.BigEndian.Uint32(f.Payload) & (1<<31 - 1)
	if inc == 0 {
		if f.StreamID == 0 {
			return 0, connError(ErrCodeProtocol, "WINDOW_UPDATE of 0 on the connection")
		}
		return 0, streamError(f.StreamID, ErrCodeProtocol, "WINDOW_UPDATE of 0")
	}
	return inc, nil
}

// Continuation returns a CONTINUATION frame's header block fragment
// (§6.10).
func (f Frame) Continuation() ([]byte, error) {
	if f.StreamID == 0 {
		return nil, connError(ErrCodeProtocol, "CONTINUATION frame on stream 0")
	}
	return f.Payload, nil
}
