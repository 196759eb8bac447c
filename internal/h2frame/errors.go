package h2frame

import "fmt"

// ErrCode is an HTTP/2 error code (RFC 9113 §7).
type ErrCode uint32

// The error codes of RFC 9113 §7.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

func (c ErrCode) String() string {
	names := [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
		"STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR",
		"ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}
	if int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("unknown error code 0x%x", uint32(c))
}

// Error is what a frame breaks: a connection error (Stream 0), to be
// answered with GOAWAY, or a stream error of Stream, to be answered with
// RST_STREAM (RFC 9113 §5.4).
type Error struct {
	Code   ErrCode
	Stream uint32
	Reason string
}

func (e *Error) Error() string {
	if e.Stream == 0 {
		return fmt.Sprintf("h2frame: connection error %v: %s", e.Code, e.Reason)
	}
	return fmt.Sprintf("h2frame: stream %d error %v: %s", e.Stream, e.Code, e.Reason)
}

func connError(code ErrCode, format string, args ...any) error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

func streamError(stream uint32, code ErrCode, format string, args ...any) error {
	return &Error{Code: code, Stream: stream, Reason: fmt.Sprintf(format, args...)}
}
