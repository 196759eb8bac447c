package websocket

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/galeio/gale/engine"
)

// MessageType is a message's kind: its frame opcode (RFC 6455 §5.2).
type MessageType uint8

// The message types, numbered as their opcodes, with gorilla/websocket's
// names. Handler.OnMessage is given TextMessage or BinaryMessage;
// WriteControl takes the others.
const (
	TextMessage   MessageType = 1
	BinaryMessage MessageType = 2
	CloseMessage  MessageType = 8
	PingMessage   MessageType = 9
	PongMessage   MessageType = 10
)

func (t MessageType) String() string {
	switch t {
	case TextMessage:
		return "text"
	case BinaryMessage:
		return "binary"
	case CloseMessage:
		return "close"
	case PingMessage:
		return "ping"
	case PongMessage:
		return "pong"
	}
	return "opcode " + strconv.Itoa(int(t))
}

// StatusCode is a close frame's status code (RFC 6455 §7.4).
type StatusCode uint16

// The status codes of RFC 6455 §7.4.1 and IANA's registry.
const (
	StatusNormalClosure   StatusCode = 1000
	StatusGoingAway       StatusCode = 1001
	StatusProtocolError   StatusCode = 1002
	StatusUnsupportedData StatusCode = 1003
	// StatusNoStatusRcvd is never sent: it reports a close frame with no
	// code.
	StatusNoStatusRcvd StatusCode = 1005
	// StatusAbnormalClosure is never sent: CloseStatus reports it for a
	// connection that ended without a close frame.
	StatusAbnormalClosure     StatusCode = 1006
	StatusInvalidFramePayload StatusCode = 1007
	StatusPolicyViolation     StatusCode = 1008
	StatusMessageTooBig       StatusCode = 1009
	StatusMandatoryExtension  StatusCode = 1010
	StatusInternalError       StatusCode = 1011
	StatusServiceRestart      StatusCode = 1012
	StatusTryAgainLater       StatusCode = 1013
	StatusBadGateway          StatusCode = 1014

	statusFirstPrivate StatusCode = 3000
	statusLastValid    StatusCode = 4999
)

// sendable reports whether code may appear in a close frame (RFC 6455
// §7.4.1-2: 1000-1003, 1007-1014 as registered, 3000-4999).
func (code StatusCode) sendable() bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	}
	return code >= statusFirstPrivate && code <= statusLastValid
}

// CloseError is the close frame a connection received: Handler.OnClose
// is given it when the peer closed the connection with one.
type CloseError struct {
	Code   StatusCode // StatusNoStatusRcvd when the frame had none
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("websocket: closed by the peer: %d %q", e.Code, e.Reason)
}

// CloseStatus returns the code of the close frame err reports, if it is
// (or wraps) a *CloseError; otherwise StatusAbnormalClosure for a non-nil
// err, and 0 for nil.
func CloseStatus(err error) StatusCode {
	var ce *CloseError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ce):
		return ce.Code
	}
	return StatusAbnormalClosure
}

var (
	// ErrReadLimit is OnClose's error when a message passed
	// Options.ReadLimit: the connection was closed with
	// StatusMessageTooBig.
	ErrReadLimit = errors.New("websocket: message larger than the read limit")
	// ErrQueueFull is returned by a write that found Options.MaxQueued
	// bytes already queued for the connection (see Options.DropWhenFull).
	ErrQueueFull = errors.New("websocket: output queue full")
	// ErrCloseSent is returned by a write made once a close frame was
	// sent (by Close, or in answer to the peer's): no message may follow
	// a close frame.
	ErrCloseSent = errors.New("websocket: close frame sent")
	// ErrCloseTimeout is OnClose's error when the peer did not answer a
	// close frame within Options.CloseTimeout, or, once it ended its
	// stream, did not read what was queued for it within that time.
	ErrCloseTimeout = errors.New("websocket: no close frame in answer")
	// ErrBadHandshake is returned (wrapped) by Dial when the server's
	// answer is not a valid upgrade, and by Upgrade for a request that is
	// not one.
	ErrBadHandshake = errors.New("websocket: bad handshake")
	// ErrPongTimeout is OnClose's error when a connection with
	// Options.PingInterval pinged its peer and heard nothing from it
	// within Options.PongTimeout: the connection was cut without a close
	// frame (CloseStatus reports StatusAbnormalClosure).
	ErrPongTimeout = errors.New("websocket: no pong within the timeout")
)

// ProtocolError is OnClose's error when the peer broke RFC 6455 (or
// RFC 7692): the connection was closed with Code (1002, 1007 or 1003).
type ProtocolError struct {
	Code   StatusCode
	Reason string
}

func (e *ProtocolError) Error() string { return "websocket: " + e.Reason }

// ErrWriteBufferFull is engine.ErrWriteBufferFull: the engine's own cap
// (engine.Options.MaxWriteBuffer) closed the connection.
var ErrWriteBufferFull = engine.ErrWriteBufferFull
