package gorilla

import (
	"encoding/binary"
	"errors"
	"io"
	"strconv"

	"github.com/galeio/gale/websocket"
)

// The close codes of RFC 6455 §11.7, with gorilla's names and values.
const (
	CloseNormalClosure           = 1000
	CloseGoingAway               = 1001
	CloseProtocolError           = 1002
	CloseUnsupportedData         = 1003
	CloseNoStatusReceived        = 1005
	CloseAbnormalClosure         = 1006
	CloseInvalidFramePayloadData = 1007
	ClosePolicyViolation         = 1008
	CloseMessageTooBig           = 1009
	CloseMandatoryExtension      = 1010
	CloseInternalServerErr       = 1011
	CloseServiceRestart          = 1012
	CloseTryAgainLater           = 1013
	CloseTLSHandshake            = 1015
)

// The message types of RFC 6455 §11.8, with gorilla's names and values.
const (
	TextMessage   = 1
	BinaryMessage = 2
	CloseMessage  = 8
	PingMessage   = 9
	PongMessage   = 10
)

var (
	// ErrCloseSent is returned by a write made after a close frame was
	// sent. It is websocket.ErrCloseSent.
	ErrCloseSent = websocket.ErrCloseSent
	// ErrReadLimit is returned by a read of a message longer than
	// SetReadLimit's limit. It is websocket.ErrReadLimit.
	ErrReadLimit = websocket.ErrReadLimit
	// ErrBadHandshake is returned by Dial when the server's answer is not
	// a valid upgrade; the response is returned with it. It is
	// websocket.ErrBadHandshake, unwrapped.
	ErrBadHandshake = websocket.ErrBadHandshake
)

var (
	errWriteTimeout        = &netError{msg: "websocket: write timeout", timeout: true}
	errUnexpectedEOF       = &CloseError{Code: CloseAbnormalClosure, Text: io.ErrUnexpectedEOF.Error()}
	errBadWriteOpCode      = errors.New("websocket: bad write message type")
	errWriteClosed         = errors.New("websocket: write closed")
	errInvalidControlFrame = errors.New("websocket: invalid control frame")
	errMalformedURL        = errors.New("malformed ws or wss URL")
)

// netError is a net.Error: a timeout.
type netError struct {
	msg     string
	timeout bool
}

func (e *netError) Error() string   { return e.msg }
func (e *netError) Timeout() bool   { return e.timeout }
func (e *netError) Temporary() bool { return e.timeout }

// CloseError is the close frame a read met: ReadMessage and NextReader
// return it once the peer closed the connection (Code
// CloseNoStatusReceived if its frame had no code), and one with
// CloseAbnormalClosure when the connection ended without a close frame.
type CloseError struct {
	// Code is defined in RFC 6455, section 11.7.
	Code int
	// Text is the optional text payload.
	Text string
}

var closeNames = map[int]string{
	CloseNormalClosure:           "normal",
	CloseGoingAway:               "going away",
	CloseProtocolError:           "protocol error",
	CloseUnsupportedData:         "unsupported data",
	CloseNoStatusReceived:        "no status",
	CloseAbnormalClosure:         "abnormal closure",
	CloseInvalidFramePayloadData: "invalid payload data",
	ClosePolicyViolation:         "policy violation",
	CloseMessageTooBig:           "message too big",
	CloseMandatoryExtension:      "mandatory extension missing",
	CloseInternalServerErr:       "internal server error",
	CloseTLSHandshake:            "TLS handshake error",
}

func (e *CloseError) Error() string {
	s := "websocket: close " + strconv.Itoa(e.Code)
	if name, ok := closeNames[e.Code]; ok {
		s += " (" + name + ")"
	}
	if e.Text != "" {
		s += ": " + e.Text
	}
	return s
}

// IsCloseError reports whether err is a *CloseError with one of codes.
func IsCloseError(err error, codes ...int) bool {
	if e, ok := err.(*CloseError); ok {
		for _, code := range codes {
			if e.Code == code {
				return true
			}
		}
	}
	return false
}

// IsUnexpectedCloseError reports whether err is a *CloseError whose code
// is not one of expectedCodes.
func IsUnexpectedCloseError(err error, expectedCodes ...int) bool {
	if e, ok := err.(*CloseError); ok {
		for _, code := range expectedCodes {
			if e.Code == code {
				return false
			}
		}
		return true
	}
	return false
}

// FormatCloseMessage formats a close frame's payload: closeCode and text;
// empty for CloseNoStatusReceived, which is never sent.
func FormatCloseMessage(closeCode int, text string) []byte {
	if closeCode == CloseNoStatusReceived {
		return []byte{}
	}
	return append(binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(text)), uint16(closeCode)), text...)
}

// parseClosePayload splits a close frame's payload; an empty one is a
// normal closure, the code gale sends for it (it sends no empty frame).
func parseClosePayload(p []byte) (websocket.StatusCode, string) {
	if len(p) < 2 {
		return websocket.StatusNormalClosure, ""
	}
	return websocket.StatusCode(binary.BigEndian.Uint16(p)), string(p[2:])
}

// readError turns the error that ended a gale connection into the one
// gorilla's reads return.
func readError(err error) error {
	var ce *websocket.CloseError
	switch {
	case errors.As(err, &ce):
		return &CloseError{Code: int(ce.Code), Text: ce.Reason}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errUnexpectedEOF
	}
	return err
}
