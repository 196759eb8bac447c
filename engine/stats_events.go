package engine

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
)

// ErrorStats count the connections that closed with a failure, by kind:
// the error OnClose got. A close by a limit is counted in LimitStats
// instead, and a clean end (nil, io.EOF, ErrDetached, a stopped engine)
// nowhere.
type ErrorStats struct {
	// Reset counts the connections whose peer reset them: a read or
	// write failed with ECONNRESET or EPIPE.
	Reset uint64
	// Read counts the connections closed by another failed read (an
	// errno, a bad TLS record).
	Read uint64
	// Write counts the connections closed by another failed write or
	// shutdown.
	Write uint64
	// TLSHandshake counts the TLS handshakes that failed or that the
	// peer cut short by leaving (their timeout is
	// LimitStats.HandshakeTimeout).
	TLSHandshake uint64
	// Other counts the rest: a deadline with Options.CloseOnDeadline, a
	// failed event loop.
	Other uint64
}

func (s *ErrorStats) add(o ErrorStats) {
	s.Reset += o.Reset
	s.Read += o.Read
	s.Write += o.Write
	s.TLSHandshake += o.TLSHandshake
	s.Other += o.Other
}

// DeadlineStats count the deadlines that passed: the OnDeadline calls
// with ErrReadDeadline and ErrWriteDeadline. (Idle timeouts close the
// connection: LimitStats.IdleTimeout counts them.)
type DeadlineStats struct {
	Read, Write uint64
}

// The failures ErrorStats counts, as eventCounters.errors' indexes.
const (
	errReset = iota
	errRead
	errWrite
	errTLS
	errOther
	numErrKinds
)

// eventCounters are the loop's counters of rarer events: one atomic add
// per event, made on the loop, and read by Stats from any goroutine.
type eventCounters struct {
	handshakes atomic.Int64 // TLS handshakes begun and not yet ended
	deadlines  [2]atomic.Uint64
	errors     [numErrKinds]atomic.Uint64
}

// load fills s's event counters.
func (ev *eventCounters) load(s *LoopStats) {
	s.Handshakes = int(ev.handshakes.Load())
	s.Deadlines = DeadlineStats{Read: ev.deadlines[0].Load(), Write: ev.deadlines[1].Load()}
	e := &ev.errors
	s.Errors = ErrorStats{
		Reset:        e[errReset].Load(),
		Read:         e[errRead].Load(),
		Write:        e[errWrite].Load(),
		TLSHandshake: e[errTLS].Load(),
		Other:        e[errOther].Load(),
	}
}

// addEvents adds o's event counters to s's.
func (s *LoopStats) addEvents(o LoopStats) {
	s.Handshakes += o.Handshakes
	s.Deadlines.Read += o.Deadlines.Read
	s.Deadlines.Write += o.Deadlines.Write
	s.Errors.add(o.Errors)
}

// countDeadline counts a deadline that passed with err. Loop goroutine.
func (ev *eventCounters) countDeadline(err error) {
	if err == ErrWriteDeadline {
		ev.deadlines[1].Add(1)
		return
	}
	ev.deadlines[0].Add(1)
}

// countError counts a close with err, which no limit explains. A close
// happens once per connection, so the errors.Is walks cost nothing on
// the data path. Loop goroutine.
func (ev *eventCounters) countError(err error) {
	if k := errKind(err); k >= 0 {
		ev.errors[k].Add(1)
	}
}

// errKind returns the ErrorStats index of a close with err, or -1 for a
// clean end.
func errKind(err error) int {
	switch {
	case err == nil, err == io.EOF, errors.Is(err, ErrDetached), errors.Is(err, net.ErrClosed):
		return -1
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return errReset // Windows' codes are mapped to these (internal/sock)
	}
	var op *net.OpError
	if !errors.As(err, &op) {
		return errOther
	}
	switch op.Op {
	case "read":
		return errRead
	case "write", "shutdown":
		return errWrite
	case "tls handshake":
		return errTLS
	}
	return errOther
}

// countHandshake counts hs as in progress until it ends (endHandshake).
// Loop goroutine.
func (lp *eloop) countHandshake(hs *handshake) {
	hs.gauge = &lp.stats.ev.handshakes
	hs.gauge.Add(1)
}

// endHandshake drops t's handshake, which is over: ended, failed, or cut
// by the close. Loop goroutine.
func (t *tlsState) endHandshake() {
	if t.hs != nil && t.hs.gauge != nil {
		t.hs.gauge.Add(-1)
	}
	t.hs = nil
}
