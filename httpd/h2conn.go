package httpd

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/h2frame"
	"golang.org/x/net/http2/hpack"
)

// h2conn is an HTTP/2 connection: the Protocol that serves a loop
// connection once it speaks HTTP/2 (negotiated by ALPN, begun with the
// preface, or upgraded from HTTP/1.1 by "Upgrade: h2c"). Frames are read
// on the loop, whole, in place; each request's handler runs on a pooled
// goroutine, which writes its response's frames itself. An idle
// connection holds its HPACK tables and this struct, and no goroutine.
//
// Fields marked loop are the loop's; the rest are guarded by mu, which
// neither side holds while it waits.
type h2conn struct {
	c   *conn
	s   *Server
	ec  *engine.Conn
	lim *h2limits

	// loop
	preface bool   // the client's preface has come
	settled bool   // its first SETTINGS has come
	dead    bool   // a connection error was sent: input is dropped
	lastID  uint32 // the highest stream the client opened
	maxRead uint32 // the largest frame read
	hb      headerBlock
	dec     *hpack.Decoder
	junk    float64   // the budget of frames that do no work (see spend)
	junkAt  time.Time // when junk was last refilled

	// encMu orders header blocks: the encoder's state is the order in
	// which its blocks go out, so a block is encoded and written under it.
	encMu sync.Mutex
	enc   *hpack.Encoder
	sink  encSink // the encoder's output

	idleBy atomic.Int64 // when IdleTimeout's wait ends, in Unix nanoseconds; 0 while a stream is open
	wrote  atomic.Bool  // a response's frame went since the client's last PING (ping)

	// outMu is held by the one goroutine at a time that waits for the
	// connection's output to drain (engine.Conn.WaitOutput's rule).
	outMu sync.Mutex

	mu         sync.Mutex
	streams    map[uint32]*h2stream // open or half-closed: the client's count; nil when none (addStream)
	handlers   int                  // handlers running, reset streams' included
	sendWin    int64                // the client's window for the connection
	peerWindow int32                // the client's SETTINGS_INITIAL_WINDOW_SIZE
	winRaise   int64                // what the SETTINGS being read adds to every stream's window, after its ACK
	peerFrame  uint32               // the client's SETTINGS_MAX_FRAME_SIZE
	recvWin    int64                // what the client may still send, all streams
	unacked    int64                // bytes read by handlers, not yet given back
	waiters    []*h2stream          // streams waiting for the connection's window
	goAway     bool                 // GOAWAY sent: no new streams
	active     bool                 // a stream is open or a handler runs
	calmed     int                  // streams refused or reset under their handler, less those served
	recent     [8]uint32            // the streams closed last, for STREAM_CLOSED
	recentAt   int
	closed     bool // the connection closed
	failed     bool // a connection error was sent: lingering closes the connection
}

// The client's connection preface (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// errH2Closed fails a stream's reads and writes once its connection is
// gone.
var errH2Closed = errors.New("http2: client connection lost")

func newH2Conn(c *conn) *h2conn {
	s := c.s
	h := &h2conn{
		c: c, s: s, ec: c.ec, lim: &s.h2,
		maxRead:    s.h2.maxFrame,
		sendWin:    h2InitialWindow,
		peerWindow: h2InitialWindow,
		peerFrame:  16 << 10,
		recvWin:    int64(s.h2.connWindow),
		junk:       h2JunkBudget,
		junkAt:     time.Now(),
	}
	h.dec = hpack.NewDecoder(s.h2.decTable, h.hb.field)
	h.hb.lim, h.hb.dec = &s.h2, h.dec
	h.dec.SetMaxStringLength(int(s.h2.maxHeaderList))
	h.enc = hpack.NewEncoder(&h.sink)
	h.enc.SetMaxDynamicTableSizeLimit(s.h2.encTable)
	return h
}

// OnOpen sends the server's preface: its SETTINGS, and the connection's
// receive window raised to the configured size.
func (h *h2conn) OnOpen(ec *engine.Conn) {
	l := h.lim
	settings := []h2frame.Setting{
		{ID: h2frame.SettingMaxConcurrentStreams, Val: l.maxStreams},
		{ID: h2frame.SettingMaxFrameSize, Val: l.maxFrame},
		{ID: h2frame.SettingHeaderTableSize, Val: l.decTable},
		{ID: h2frame.SettingInitialWindowSize, Val: uint32(l.streamWindow)},
		{ID: h2frame.SettingMaxHeaderListSize, Val: l.maxHeaderList},
	}
	if h.s.ExtendedConnect {
		settings = append(settings, h2frame.Setting{ID: h2frame.SettingEnableConnectProtocol, Val: 1})
	}
	b := h2frame.AppendSettings(nil, false, settings...)
	if d := l.connWindow - h2InitialWindow; d > 0 {
		b = h2frame.AppendWindowUpdate(b, 0, uint32(d))
	}
	ec.Write(b)
	h.idle()
}

// OnData reads the preface, then every whole frame.
func (h *h2conn) OnData(ec *engine.Conn, in *engine.Inbound) engine.Action {
	if h.dead {
		h.drop(in)
		return engine.None
	}
	if !h.preface {
		b := in.Bytes()
		n := min(len(b), len(h2Preface))
		if string(b[:n]) != h2Preface[:n] {
			return h.fail(in, &h2frame.Error{Code: h2frame.ErrCodeProtocol, Reason: "bad connection preface"})
		}
		if n < len(h2Preface) {
			return engine.None
		}
		in.Discard(n)
		h.preface = true
	}
	for !h.dead {
		f, n, err := h2frame.Next(in.Bytes(), h.maxRead)
		if err == nil && n == 0 {
			break
		}
		if err == nil {
			err = h.frame(f)
			in.Discard(n)
		}
		if err != nil {
			var fe *h2frame.Error
			if !errors.As(err, &fe) || fe.Stream == 0 {
				return h.fail(in, err)
			}
			h.resetStream(fe.Stream, fe.Code)
		}
	}
	if h.dead {
		h.drop(in)
	} else {
		h.rearm()
	}
	return engine.None
}

// drop discards the input of a connection that is ending; lingering
// after a connection error, its deadline is set again (each input
// consumed meets the engine's read deadline).
func (h *h2conn) drop(in *engine.Inbound) {
	if h.c.lingering != 0 {
		h.c.linger(in)
		return
	}
	in.Discard(in.Len())
}

// fail ends the connection for a connection error: GOAWAY with its code,
// then the careful close of HTTP/1's linger, so that the client reads the
// GOAWAY before the connection goes. It runs on the loop.
func (h *h2conn) fail(in *engine.Inbound, err error) engine.Action {
	code := h2frame.ErrCodeProtocol
	var fe *h2frame.Error
	if errors.As(err, &fe) {
		code = fe.Code
	}
	h.dead = true
	h.mu.Lock()
	h.failed = true // lingering closes it
	h.mu.Unlock()
	h.ec.Write(h2frame.AppendGoAway(nil, h.lastID, code, nil))
	h.c.linger(in)
	h.abortAll()
	return engine.None
}

// abortAll ends every stream: the connection is going, with no word for
// them (a connection error, or the connection closed).
func (h *h2conn) abortAll() {
	h.mu.Lock()
	h.goAway = true
	var open []*h2stream
	for _, st := range h.streams {
		open = append(open, st)
	}
	h.streams = nil
	h.mu.Unlock()
	for _, st := range open {
		st.abort(errH2Closed)
	}
}

// OnEOF: the client's stream ended, and with it the connection, as
// net/http's HTTP/2 server takes it: no WINDOW_UPDATE can come any
// more, so the streams in progress end (their handlers' contexts are
// canceled) and the connection closes.
func (h *h2conn) OnEOF(ec *engine.Conn) engine.Action {
	h.dead = true
	h.abortAll()
	return engine.Close
}

// OnDeadline closes an idle connection (IdleTimeout), a lingering one,
// and one whose client has not begun (ReadHeaderTimeout).
func (h *h2conn) OnDeadline(ec *engine.Conn, err error) engine.Action {
	if err == engine.ErrWriteDeadline {
		ec.Abort()
		return engine.None
	}
	if h.c.lingering != 0 {
		return engine.Close
	}
	h.mu.Lock()
	idle := len(h.streams) == 0 && h.handlers == 0
	h.mu.Unlock()
	if !idle {
		return engine.None
	}
	h.shutdown()
	return engine.None
}

// OnClose fails every stream: handlers see their contexts canceled and
// their reads and writes fail.
func (h *h2conn) OnClose(ec *engine.Conn, err error) {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.abortAll()
	h.s.setState(h.c, http.StateClosed)
}

// shutdown sends GOAWAY, once, and closes the connection now if no
// stream is open, or once the last one ends. Any goroutine.
func (h *h2conn) shutdown() {
	h.mu.Lock()
	first := !h.goAway
	h.goAway = true
	idle := len(h.streams) == 0 && h.handlers == 0
	h.mu.Unlock()
	if first {
		h.ec.Execute(func(*engine.Conn) {
			h.ec.Write(h2frame.AppendGoAway(nil, h.lastID, h2frame.ErrCodeNo, nil))
		})
	}
	if idle {
		h.ec.Execute(func(*engine.Conn) { h.ec.Close() })
	}
}

// idle starts IdleTimeout's wait, once no stream is open. Any goroutine.
func (h *h2conn) idle() {
	if d := h.s.idleTimeout(); d > 0 {
		t := time.Now().Add(d)
		h.idleBy.Store(t.UnixNano())
		h.ec.SetReadDeadline(t)
	}
}

// rearm sets the idle deadline again after frames that opened no stream
// (PING, SETTINGS, WINDOW_UPDATE): each input consumed meets the
// engine's read deadline, and only a stream ends HTTP/2's idleness, as
// in net/http. The loop.
func (h *h2conn) rearm() {
	by := h.idleBy.Load()
	if by == 0 {
		return
	}
	h.mu.Lock()
	idle := !h.active
	h.mu.Unlock()
	if idle {
		h.ec.SetReadDeadline(time.Unix(0, by))
	}
}

// resetStream sends RST_STREAM for id with code and ends the stream, if
// it is open. It runs on the loop.
func (h *h2conn) resetStream(id uint32, code h2frame.ErrCode) {
	h.ec.Write(h2frame.AppendRSTStream(nil, id, code))
	st := h.stream(id)
	if st != nil {
		st.abort(errStreamReset)
		h.closeStream(st)
	}
}
