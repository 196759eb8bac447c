package engine

import (
	"errors"
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
