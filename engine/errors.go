package engine

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/galeio/gale/internal/sock"
)

var (
	// ErrWriteBufferFull closes a connection whose queued output would
	// pass Options.MaxWriteBuffer; Write returns it.
	ErrWriteBufferFull = errors.New("engine: write buffer full")
	// ErrInputBufferFull closes a connection whose handler left more than
	// Options.MaxInputBuffer bytes of input unconsumed.
	ErrInputBufferFull = errors.New("engine: input buffer full")
	// ErrEngineStopped is returned by calls after Stop or Shutdown; it
	// matches net.ErrClosed.
	ErrEngineStopped = &stoppedError{}
	// ErrIdleTimeout is OnDeadline's and OnClose's error when
	// Options.IdleTimeout or Options.ReadIdleTimeout passed. It matches
	// os.ErrDeadlineExceeded and is a net.Error whose Timeout is true.
	ErrIdleTimeout error = &timeoutError{"engine: idle timeout"}
	// ErrReadDeadline is OnDeadline's error when a read deadline passed
	// with no byte received since it was set.
	ErrReadDeadline error = &timeoutError{"engine: read deadline exceeded"}
	// ErrWriteDeadline is OnDeadline's error when a write deadline passed
	// with output still queued, and Write's once it has passed.
	ErrWriteDeadline error = &timeoutError{"engine: write deadline exceeded"}
)

// A ShutdownError is Engine.Shutdown's error when connections closed
// with output lost.
type ShutdownError struct {
	// Lost counts the connections closed with output lost: output queued
	// and dropped (cut short when the context ended, a write that failed,
	// a peer's reset, Abort, MaxWriteBuffer), or a close with the peer's
	// bytes unread (a peer that went on sending past the linger), which
	// the kernel turns into a reset, while output was in flight: not yet
	// acknowledged on TCP, which the reset discards, or not yet read on a
	// Unix socket.
	Lost int
	// Err is the context's error if it ended before every connection
	// closed, else nil.
	Err error
}

func (e *ShutdownError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("engine: shutdown: %v: %d connections closed with output lost", e.Err, e.Lost)
	}
	return fmt.Sprintf("engine: shutdown: %d connections closed with output lost", e.Lost)
}

// Unwrap returns the context's error, or nil.
func (e *ShutdownError) Unwrap() error { return e.Err }

type stoppedError struct{}

func (*stoppedError) Error() string        { return "engine stopped" }
func (*stoppedError) Is(target error) bool { return target == net.ErrClosed }

// timeoutError is a deadline error: a net.Error whose Timeout is true and
// that matches os.ErrDeadlineExceeded.
type timeoutError struct{ msg string }

func (e *timeoutError) Error() string        { return e.msg }
func (e *timeoutError) Timeout() bool        { return true }
func (e *timeoutError) Temporary() bool      { return true }
func (e *timeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

// opError wraps a failure of op on c once (sock.OpError).
func (c *Conn) opError(op string, err error) error {
	return sock.OpError(op, c.network(), c.LocalAddr(), c.RemoteAddr(), err)
}
