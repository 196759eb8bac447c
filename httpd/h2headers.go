package httpd

import (
	"net/http"
	"sync"
	"time"

	"github.com/galeio/gale/internal/h2frame"
	"golang.org/x/net/http2/hpack"
)

// headerBlock is the header block being received: a HEADERS frame's
// fragment and its CONTINUATIONs, decoded as they come (HPACK's state
// moves with every block, even one that is refused).
type headerBlock struct {
	stream  uint32 // 0 when no block is open
	end     bool   // END_STREAM was on the HEADERS
	trailer bool   // the block is a stream's trailers
	size    uint32 // the decoded list's size (§6.5.2)
	raw     int    // the compressed bytes
	tooBig  bool   // over MAX_HEADER_LIST_SIZE or the field count: refused with 431
	lim     *h2limits
	dec     *hpack.Decoder
	fields  []hpack.HeaderField
}

// field is the decoder's emitter: it keeps the block's fields until the
// list passes its bounds, and stops decoding into memory then.
func (b *headerBlock) field(f hpack.HeaderField) {
	if b.tooBig {
		return
	}
	b.size += f.Size()
	if b.size > b.lim.maxHeaderList || len(b.fields) >= b.lim.maxFields {
		b.tooBig = true
		b.fields = b.fields[:0]
		b.dec.SetEmitEnabled(false)
		return
	}
	b.fields = append(b.fields, f)
}

// h2Fields lend a header block's fields a slice while it is decoded, so
// that an idle connection keeps none.
var h2Fields = sync.Pool{New: func() any { f := make([]hpack.HeaderField, 0, 16); return &f }}

// headers begins a header block: a new stream's request, or a stream's
// trailers.
func (h *h2conn) headers(f h2frame.Frame) error {
	id := f.StreamID
	if id%2 == 0 && id != 0 {
		return h2Error(0, h2frame.ErrCodeProtocol, "HEADERS on stream %d, which the server would open", id)
	}
	block, _, err := f.Headers()
	if err != nil {
		return err
	}
	end := f.Flags.Has(h2frame.FlagEndStream)
	trailer := false
	if id > h.lastID {
		h.lastID = id
	} else {
		st := h.stream(id)
		switch {
		case st == nil && h.wasClosed(id):
			return h2Error(0, h2frame.ErrCodeStreamClosed, "HEADERS on closed stream %d", id)
		case st == nil:
			return h2Error(0, h2frame.ErrCodeProtocol, "HEADERS on stream %d, below the last opened", id)
		case st.remoteDone:
			return h2Error(id, h2frame.ErrCodeStreamClosed, "HEADERS on half-closed stream %d", id)
		}
		trailer = true
	}
	h.hb.stream, h.hb.end, h.hb.trailer = id, end, trailer
	h.hb.fields = (*h2Fields.Get().(*[]hpack.HeaderField))[:0]
	return h.fragment(block, f.Flags.Has(h2frame.FlagEndHeaders))
}

// wasClosed reports whether id is among the streams closed last.
func (h *h2conn) wasClosed(id uint32) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.recent {
		if v == id {
			return true
		}
	}
	return false
}

func (h *h2conn) continuation(f h2frame.Frame) error {
	block, err := f.Continuation()
	if err != nil {
		return err
	}
	if h.hb.stream == 0 {
		return h2Error(0, h2frame.ErrCodeProtocol, "CONTINUATION with no header block open")
	}
	if len(block) == 0 && !f.Flags.Has(h2frame.FlagEndHeaders) {
		if err := h.spend(1); err != nil {
			return err
		}
	}
	return h.fragment(block, f.Flags.Has(h2frame.FlagEndHeaders))
}

// fragment decodes a piece of the open block, and acts on the block once
// it is whole. A block whose compressed bytes pass what its decoded
// list may hold is a flood of CONTINUATIONs (CVE-2023-45288): the
// connection ends.
func (h *h2conn) fragment(p []byte, last bool) error {
	b := &h.hb
	b.raw += len(p)
	if b.raw > int(h.lim.maxHeaderList)+64<<10 {
		return h2Error(0, h2frame.ErrCodeEnhanceYourCalm, "a header block of more than %d bytes", b.raw)
	}
	if _, err := h.dec.Write(p); err != nil {
		return h2Error(0, h2frame.ErrCodeCompression, "%v", err)
	}
	if !last {
		return nil
	}
	if err := h.dec.Close(); err != nil {
		return h2Error(0, h2frame.ErrCodeCompression, "%v", err)
	}
	h.dec.SetEmitEnabled(true)
	id, end, trailer, tooBig := b.stream, b.end, b.trailer, b.tooBig
	fields := b.fields
	b.stream, b.size, b.raw, b.tooBig = 0, 0, 0, false
	b.fields = nil
	defer func() {
		if cap(fields) <= 256 {
			clear(fields)
			fields = fields[:0]
			h2Fields.Put(&fields)
		}
	}()
	switch {
	case trailer:
		return h.trailers(id, fields, end, tooBig)
	case tooBig:
		return h.refuseHeaders(id)
	}
	return h.open(id, fields, end)
}

// refuseHeaders answers a request whose header list is over the bounds
// with 431, as net/http's HTTP/2 server does.
func (h *h2conn) refuseHeaders(id uint32) error {
	h.s.refused.count(http.StatusRequestHeaderFieldsTooLarge)
	st := &h2stream{h: h, id: id}
	h.writeHeaders(st, http.StatusRequestHeaderFieldsTooLarge, nil, true)
	return nil
}

// trailers ends a stream's body with its trailers.
func (h *h2conn) trailers(id uint32, fields []hpack.HeaderField, end, tooBig bool) error {
	if !end {
		return h2Error(id, h2frame.ErrCodeProtocol, "trailers without END_STREAM")
	}
	if tooBig {
		return h2Error(id, h2frame.ErrCodeProtocol, "trailers over the header list's bounds")
	}
	t, err := trailerFields(id, fields)
	if err != nil {
		return err
	}
	h.mu.Lock()
	st := h.streams[id]
	if st == nil || st.remoteDone {
		h.mu.Unlock()
		return nil
	}
	if st.declared >= 0 && st.got != st.declared {
		h.mu.Unlock()
		return h2Error(id, h2frame.ErrCodeProtocol, "a body of %d bytes where Content-Length says %d", st.got, st.declared)
	}
	st.pushTrailer(t)
	local := st.localDone
	h.mu.Unlock()
	if local {
		h.closeStream(st)
	}
	return nil
}

// open starts a stream for a request: checked against the stream and
// handler bounds, then handed to a handler.
func (h *h2conn) open(id uint32, fields []hpack.HeaderField, end bool) error {
	req, declared, err := h.request(id, fields, end)
	if err != nil {
		return err
	}
	h.mu.Lock()
	switch {
	case h.goAway:
		h.mu.Unlock()
		return h2Error(id, h2frame.ErrCodeRefusedStream, "the connection is going away")
	case len(h.streams) >= int(h.lim.maxStreams):
		h.mu.Unlock()
		return h2Error(id, h2frame.ErrCodeRefusedStream, "over SETTINGS_MAX_CONCURRENT_STREAMS")
	case h.handlers >= int(h.lim.maxStreams):
		// The client closed its streams but their handlers still run:
		// what a rapid reset leaves behind.
		h.mu.Unlock()
		if err := h.calmDown(); err != nil {
			return err
		}
		return h2Error(id, h2frame.ErrCodeRefusedStream, "too many handlers running")
	}
	st := h.newStream(id, req, declared, end)
	h.addStream(st)
	h.handlers++
	first := !h.active
	h.active = true
	h.mu.Unlock()
	if first {
		h.busy()
	}
	if !h.s.pool.submit(st) {
		h.s.logf("%v: refusing a request from %s", errNoHandlers, h.c.raddr)
		h.mu.Lock()
		h.handlers--
		st.handlerDone = true
		h.mu.Unlock()
		h.reset(st, h2frame.ErrCodeRefusedStream, errNoHandlers)
		return nil
	}
	return nil
}

// busy ends the idle timeout's wait: a stream is open. The loop.
func (h *h2conn) busy() {
	h.idleBy.Store(0)
	if h.s.idleTimeout() > 0 || h.s.headerTimeout() > 0 {
		h.ec.SetReadDeadline(time.Time{})
	}
	h.s.setState(h.c, http.StateActive)
}
