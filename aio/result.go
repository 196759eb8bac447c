package aio

import "net"

// OpType is the kind of a request.
type OpType int

const (
	// OpRead marks a read request: Read, ReadTimeout or ReadFull.
	OpRead OpType = iota
	// OpWrite marks a write request: Write or WriteTimeout.
	OpWrite
)

// String returns "read" or "write".
func (t OpType) String() string {
	switch t {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	}
	return "unknown"
}

// OpResult is the completion of one request, as returned by WaitIO.
//
// Buffer, and the bytes it holds when IsSwapBuffer is true, are valid only
// until the next call to WaitIO.
type OpResult struct {
	// Operation is OpRead or OpWrite.
	Operation OpType
	// Context is the ctx given when the request was submitted.
	Context any
	// Conn is the net.Conn the request was submitted on. Once delegated its
	// descriptor is closed, so it is good for identity and addresses only.
	Conn net.Conn
	// Buffer is the caller's buffer, whole, for reads into a caller buffer
	// and for writes (the data is Buffer[:Size]); for nil-buffer reads it is
	// a part of the swap buffer with len(Buffer) == Size.
	Buffer []byte
	// IsSwapBuffer reports that Buffer belongs to the watcher's swap
	// buffer. When it is false, Buffer is always the caller's own.
	IsSwapBuffer bool
	// Size is the number of bytes read or written, including the progress
	// made before an error or the deadline.
	Size int
	// Error is nil, io.EOF, ErrDeadline, ErrConnClosed, ErrUnsupported, or
	// a *net.OpError.
	Error error
}
