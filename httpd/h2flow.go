package httpd

import (
	"time"

	"github.com/galeio/gale/internal/h2frame"
)

// Flow control. Receiving, the client's windows are what the server will
// buffer: a stream's, the body's unread bytes, and the connection's, all
// bodies' together. Bytes go back to them as handlers read (or drop)
// them, in WINDOW_UPDATEs of at least a quarter of the window. Sending,
// a handler's Write takes window before each DATA frame and waits for
// the client's WINDOW_UPDATE when there is none, and waits for the
// connection's output to drain when it passes h2HighWater: a client
// that does not read holds its handlers in Write, not the server's
// memory, and for at most the stall timeout.

// The output a connection queues before its writers wait, and what they
// wait for it to drain to.
const (
	h2HighWater = 128 << 10
	h2LowWater  = 32 << 10
)

// creditConn gives n bytes back to the connection's receive window.
// Any goroutine.
func (h *h2conn) creditConn(n int64) {
	h.creditStream(nil, n)
}

// creditStream gives n bytes back to st's window (unless st is nil or
// its client is done sending) and the connection's. Any goroutine.
func (h *h2conn) creditStream(st *h2stream, n int64) {
	if n <= 0 {
		return
	}
	var b [2 * (h2frame.HeaderLen + 4)]byte
	out := b[:0]
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.unacked += n
	if h.unacked >= int64(h.lim.connWindow)/4 {
		out = h2frame.AppendWindowUpdate(out, 0, uint32(h.unacked))
		h.recvWin += h.unacked
		h.unacked = 0
	}
	if st != nil && !st.remoteDone {
		st.unacked += n
		if st.unacked >= int64(h.lim.streamWindow)/4 {
			out = h2frame.AppendWindowUpdate(out, st.id, uint32(st.unacked))
			st.recvWin += st.unacked
			st.unacked = 0
		}
	}
	h.mu.Unlock()
	if len(out) > 0 {
		h.ec.Write(out)
	}
}

// reserve waits until st may send DATA, and returns how much of n it
// may send in one frame now (n > 0). It fails when the stream ends, or
// when the client keeps the window shut for the stall timeout, which
// resets the stream. The handler's goroutine.
func (st *h2stream) reserve(n int) (int, error) {
	h := st.h
	var stall *time.Timer
	defer func() {
		if stall != nil {
			stall.Stop()
		}
	}()
	for {
		h.mu.Lock()
		if err := st.err; err != nil {
			h.mu.Unlock()
			return 0, err
		}
		k := min(int64(n), st.sendWin, h.sendWin, int64(h.peerFrame))
		if k > 0 {
			st.sendWin -= k
			h.sendWin -= k
			h.mu.Unlock()
			return int(k), nil
		}
		if h.sendWin <= 0 {
			h.waiters = append(h.waiters, st)
		}
		h.mu.Unlock()
		if stall == nil {
			stall = time.NewTimer(h.lim.stall)
		}
		select {
		case <-st.winCh:
		case <-stall.C:
			h.reset(st, h2frame.ErrCodeFlowControl, errStalled)
		}
	}
}

// take takes window for n bytes of DATA in one frame, if there is that
// much now, and reports whether it did. It does not wait.
func (st *h2stream) take(n int) bool {
	h := st.h
	h.mu.Lock()
	defer h.mu.Unlock()
	k := int64(n)
	if st.err != nil || k > st.sendWin || k > h.sendWin || k > int64(h.peerFrame) {
		return false
	}
	st.sendWin -= k
	h.sendWin -= k
	return true
}

// drain waits, once the connection's output passes h2HighWater, for it
// to drain to h2LowWater: one writer waits at a time, the others behind
// it. Output that does not move for the stall timeout closes the
// connection. It fails when st ends meanwhile. The handler's goroutine.
func (st *h2stream) drain() error {
	h := st.h
	if h.ec.OutboundBuffered() <= h2HighWater {
		return nil
	}
	h.outMu.Lock()
	defer h.outMu.Unlock()
	stall := time.AfterFunc(h.lim.stall, func() { h.ec.Abort() })
	defer stall.Stop()
	if err := h.ec.WaitOutput(h2LowWater, st.done); err != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if st.err != nil {
			return st.err
		}
		return errH2Closed
	}
	return nil
}
