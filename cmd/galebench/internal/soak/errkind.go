package soak

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// errKind names an error for the counts by kind, after the operation
// that met it: "read: ECONNRESET", "write: EPIPE", "dial: ECONNREFUSED",
// "read: EOF", "read: stall" (no progress for the stall timeout),
// "read: closed" (the client's own close). Anything else keeps its
// message, shortened.
func errKind(op string, err error) string {
	var errno syscall.Errno
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return op + ": stall"
	case errors.Is(err, net.ErrClosed):
		return op + ": closed"
	case errors.Is(err, io.EOF):
		return op + ": EOF"
	case errors.As(err, &errno):
		if name := errnoName(errno); name != "" {
			return op + ": " + name
		}
		return op + ": " + errno.Error()
	}
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return op + ": " + s
}
