package h2frame

import (
	"encoding/binary"
	"fmt"
)

// SettingID names a setting (RFC 9113 §6.5.2).
type SettingID uint16

// The settings of RFC 9113 §6.5.2 and RFC 8441.
const (
	SettingHeaderTableSize       SettingID = 0x1
	SettingEnablePush            SettingID = 0x2
	SettingMaxConcurrentStreams  SettingID = 0x3
	SettingInitialWindowSize     SettingID = 0x4
	SettingMaxFrameSize          SettingID = 0x5
	SettingMaxHeaderListSize     SettingID = 0x6
	SettingEnableConnectProtocol SettingID = 0x8
)

// Setting is one setting of a SETTINGS frame.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Valid reports the error a setting's value is (§6.5.2), or nil.
// Settings this package does not know are valid: they are ignored.
func (s Setting) Valid() error {
	switch s.ID {
	case SettingEnablePush, SettingEnableConnectProtocol:
		if s.Val > 1 {
			return connError(ErrCodeProtocol, "setting %v = %d, want 0 or 1", s.ID, s.Val)
		}
	case SettingInitialWindowSize:
		if s.Val > 1<<31-1 {
			return connError(ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE = %d, over 2^31-1", s.Val)
		}
	case SettingMaxFrameSize:
		if s.Val < 1<<14 || s.Val > 1<<24-1 {
			return connError(ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE = %d, outside 2^14 to 2^24-1", s.Val)
		}
	}
	return nil
}

func (id SettingID) String() string {
	names := map[SettingID]string{SettingHeaderTableSize: "HEADER_TABLE_SIZE", SettingEnablePush: "ENABLE_PUSH",
		SettingMaxConcurrentStreams: "MAX_CONCURRENT_STREAMS", SettingInitialWindowSize: "INITIAL_WINDOW_SIZE",
		SettingMaxFrameSize: "MAX_FRAME_SIZE", SettingMaxHeaderListSize: "MAX_HEADER_LIST_SIZE",
		SettingEnableConnectProtocol: "ENABLE_CONNECT_PROTOCOL"}
	if n, ok := names[id]; ok {
		return "SETTINGS_" + n
	}
	return fmt.Sprintf("SETTINGS_UNKNOWN_%d", uint16(id))
}

// Settings checks a SETTINGS frame (§6.5) and calls fn with each of its
// settings, in order, each checked (Setting.Valid); it stops at fn's
// first error and returns it. An acknowledgement has none.
func (f Frame) Settings(fn func(Setting) error) error {
	switch {
	case f.StreamID != 0:
		return connError(ErrCodeProtocol, "SETTINGS frame on stream %d", f.StreamID)
	case f.Flags.Has(FlagAck) && len(f.Payload) != 0:
		return connError(ErrCodeFrameSize, "SETTINGS acknowledgement of %d bytes", len(f.Payload))
	case len(f.Payload)%6 != 0:
		return connError(ErrCodeFrameSize, "SETTINGS frame of %d bytes, not a multiple of 6", len(f.Payload))
	}
	for p := f.Payload; len(p) > 0; p = p[6:] {
		s := Setting{ID: SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}
		if err := s.Valid(); err != nil {
			return err
		}
		if err := fn(s); err != nil {
			return err
		}
	}
	return nil
}
