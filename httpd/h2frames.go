package httpd

import (
	"fmt"
	"time"

	"github.com/galeio/gale/internal/h2frame"
)

// h2Error is a connection error (stream 0) or a stream error.
func h2Error(stream uint32, code h2frame.ErrCode, format string, args ...any) error {
	return &h2frame.Error{Code: code, Stream: stream, Reason: fmt.Sprintf(format, args...)}
}

// frame acts on one frame; its payload is valid during the call only.
// It runs on the loop.
func (h *h2conn) frame(f h2frame.Frame) error {
	if h.hb.stream != 0 && (f.Type != h2frame.TypeContinuation || f.StreamID != h.hb.stream) {
		return h2Error(0, h2frame.ErrCodeProtocol, "%v frame inside stream %d's header block", f.Type, h.hb.stream)
	}
	if !h.settled {
		if f.Type != h2frame.TypeSettings || f.Flags.Has(h2frame.FlagAck) {
			return h2Error(0, h2frame.ErrCodeProtocol, "the client's preface is not followed by SETTINGS")
		}
		h.settled = true
	}
	switch f.Type {
	case h2frame.TypeData:
		return h.data(f)
	case h2frame.TypeHeaders:
		return h.headers(f)
	case h2frame.TypeContinuation:
		return h.continuation(f)
	case h2frame.TypePriority:
		_, err := f.Priority()
		if err == nil {
			err = h.spend(1)
		}
		return err
	case h2frame.TypeRSTStream:
		return h.rstStream(f)
	case h2frame.TypeSettings:
		return h.settings(f)
	case h2frame.TypePing:
		return h.ping(f)
	case h2frame.TypeGoAway:
		_, _, _, err := f.GoAway()
		if err == nil {
			h.mu.Lock()
			h.goAway = true // the client opens no more streams
			h.mu.Unlock()
		}
		return err
	case h2frame.TypeWindowUpdate:
		return h.windowUpdate(f)
	case h2frame.TypePushPromise:
		return h2Error(0, h2frame.ErrCodeProtocol, "PUSH_PROMISE from a client")
	}
	return h.spend(1) // an extension's frame: ignored (§5.5)
}

// idleStream reports whether id names a stream the client has not opened
// yet (§5.1: a frame other than HEADERS or PRIORITY on it is a
// connection error).
func (h *h2conn) idleStream(id uint32) bool { return id > h.lastID }

// The junk budget: frames that make no progress (PING, SETTINGS,
// PRIORITY, empty DATA and CONTINUATION, unknown types) spend it, and
// it refills with time; a client that spends it all is told to calm down
// and disconnected (the floods of CVE-2019-9512, -9515, -9518).
const (
	h2JunkBudget = 2000 // frames at once
	h2JunkRefill = 500  // frames per second
)

// spend takes n from the junk budget.
func (h *h2conn) spend(n float64) error {
	now := time.Now()
	h.junk = min(h2JunkBudget, h.junk+now.Sub(h.junkAt).Seconds()*h2JunkRefill) - n
	h.junkAt = now
	if h.junk < 0 {
		return h2Error(0, h2frame.ErrCodeEnhanceYourCalm, "too many frames that do no work")
	}
	return nil
}

// h2MaxBacklog bounds the output a client that does not read can make
// the loop queue with frames that ask for an answer (PING, SETTINGS).
const h2MaxBacklog = 1 << 20

func (h *h2conn) answer(b []byte) error {
	if h.ec.OutboundBuffered() > h2MaxBacklog {
		return h2Error(0, h2frame.ErrCodeEnhanceYourCalm, "the client does not read its answers")
	}
	h.ec.Write(b)
	return nil
}

// ping answers a PING. One that follows a response's frames is the
// client timing its window (grpc-go's BDP estimator PINGs on every round
// trip under load): it costs nothing; others spend the junk budget.
func (h *h2conn) ping(f h2frame.Frame) error {
	data, err := f.Ping()
	if err != nil || f.Flags.Has(h2frame.FlagAck) {
		return err
	}
	if !h.wrote.Swap(false) {
		if err := h.spend(1); err != nil {
			return err
		}
	}
	return h.answer(h2frame.AppendPing(nil, true, data))
}

func (h *h2conn) settings(f h2frame.Frame) error {
	if f.StreamID != 0 {
		return h2Error(0, h2frame.ErrCodeProtocol, "SETTINGS frame on stream %d", f.StreamID)
	}
	if f.Flags.Has(h2frame.FlagAck) {
		if len(f.Payload) != 0 {
			return h2Error(0, h2frame.ErrCodeFrameSize, "SETTINGS ack with a payload")
		}
		return nil
	}
	if err := h.spend(1); err != nil {
		return err
	}
	err := f.Settings(h.setting)
	if err != nil {
		h.mu.Lock()
		h.winRaise = 0
		h.mu.Unlock()
		return err
	}
	err = h.answer(h2frame.AppendSettings(nil, true))
	// A larger window opens once the ACK is out, and its writers wake:
	// a DATA frame it lets go follows the ACK, as clients that wait for
	// the ACK expect (h2spec 6.9.2/1 drops the frames before it).
	h.mu.Lock()
	raise := h.winRaise
	h.winRaise = 0
	for _, st := range h.streams {
		st.sendWin += raise
		if st.sendWin > 0 {
			st.signalWin()
		}
	}
	h.mu.Unlock()
	return err
}

// setting applies one of the client's settings.
func (h *h2conn) setting(st h2frame.Setting) error {
	if err := st.Valid(); err != nil {
		return err
	}
	switch st.ID {
	case h2frame.SettingHeaderTableSize:
		h.encMu.Lock()
		h.enc.SetMaxDynamicTableSize(min(st.Val, h.lim.encTable))
		h.encMu.Unlock()
	case h2frame.SettingInitialWindowSize:
		return h.setInitialWindow(int32(st.Val))
	case h2frame.SettingMaxFrameSize:
		h.mu.Lock()
		h.peerFrame = st.Val
		h.mu.Unlock()
	}
	return nil
}

// setInitialWindow moves every stream's send window by the change of
// the client's initial window (§6.9.2). A decrease applies at once; an
// increase waits for the SETTINGS frame's ACK (settings), so that no
// handler's write can use it before the ACK is out. The loop.
func (h *h2conn) setInitialWindow(v int32) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := int64(v) - int64(h.peerWindow)
	h.peerWindow = v
	for _, st := range h.streams {
		if st.sendWin+h.winRaise+d > h2MaxWindow {
			return h2Error(0, h2frame.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE overflows stream %d's window", st.id)
		}
	}
	if d > 0 {
		h.winRaise += d
		return nil
	}
	for _, st := range h.streams {
		st.sendWin += d
	}
	return nil
}

func (h *h2conn) windowUpdate(f h2frame.Frame) error {
	if f.StreamID != 0 && h.idleStream(f.StreamID) {
		return h2Error(0, h2frame.ErrCodeProtocol, "WINDOW_UPDATE on idle stream %d", f.StreamID)
	}
	inc, err := f.WindowUpdate()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if f.StreamID == 0 {
		if h.sendWin+int64(inc) > h2MaxWindow {
			return h2Error(0, h2frame.ErrCodeFlowControl, "the connection's window overflows")
		}
		h.sendWin += int64(inc)
		for _, st := range h.waiters {
			st.signalWin()
		}
		clear(h.waiters)
		h.waiters = h.waiters[:0]
		return nil
	}
	st := h.streams[f.StreamID]
	if st == nil {
		return nil // closed: a late update
	}
	if st.sendWin+int64(inc) > h2MaxWindow {
		return h2Error(f.StreamID, h2frame.ErrCodeFlowControl, "stream %d's window overflows", f.StreamID)
	}
	st.sendWin += int64(inc)
	st.signalWin()
	return nil
}

func (h *h2conn) rstStream(f h2frame.Frame) error {
	code, err := f.RSTStream()
	if err != nil {
		return err
	}
	if h.idleStream(f.StreamID) {
		return h2Error(0, h2frame.ErrCodeProtocol, "RST_STREAM on idle stream %d", f.StreamID)
	}
	st := h.stream(f.StreamID)
	if st == nil {
		return nil
	}
	if st.running() {
		// A reset under a running handler: the rapid reset of
		// CVE-2023-44487 does this at scale.
		if err := h.calmDown(); err != nil {
			return err
		}
	}
	st.abort(&streamResetError{code})
	h.closeStream(st)
	return nil
}

// calmDown counts a stream refused or reset under its handler; too many,
// beyond those served, and the client is told to calm down.
func (h *h2conn) calmDown() error {
	h.mu.Lock()
	h.calmed++
	n := h.calmed
	h.mu.Unlock()
	if n > max(100, 2*int(h.lim.maxStreams)) {
		return h2Error(0, h2frame.ErrCodeEnhanceYourCalm, "too many streams refused or reset")
	}
	return nil
}

// data gives a DATA frame's bytes to its stream's body.
func (h *h2conn) data(f h2frame.Frame) error {
	p, err := f.Data()
	if err != nil {
		return err
	}
	if h.idleStream(f.StreamID) {
		return h2Error(0, h2frame.ErrCodeProtocol, "DATA on idle stream %d", f.StreamID)
	}
	n := int64(len(f.Payload))
	end := f.Flags.Has(h2frame.FlagEndStream)
	if n == 0 && !end {
		if err := h.spend(1); err != nil {
			return err
		}
	}
	h.mu.Lock()
	if n > h.recvWin {
		h.mu.Unlock()
		return h2Error(0, h2frame.ErrCodeFlowControl, "DATA beyond the connection's window")
	}
	h.recvWin -= n
	st := h.streams[f.StreamID]
	if st == nil || st.remoteDone {
		h.mu.Unlock()
		h.creditConn(n) // not the stream's to hold
		return h2Error(f.StreamID, h2frame.ErrCodeStreamClosed, "DATA on closed stream %d", f.StreamID)
	}
	if n > st.recvWin {
		h.mu.Unlock()
		h.creditConn(n)
		return h2Error(f.StreamID, h2frame.ErrCodeFlowControl, "DATA beyond stream %d's window", f.StreamID)
	}
	st.recvWin -= n
	kept, err := st.push(p, end)
	local := st.localDone
	h.mu.Unlock()
	if back := n - int64(kept); back > 0 {
		h.creditStream(st, back) // padding, and bytes the handler no longer wants
	}
	if err != nil {
		return err
	}
	if end && local {
		h.closeStream(st)
	}
	return nil
}
