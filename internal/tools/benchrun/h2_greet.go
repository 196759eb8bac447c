package benchrun

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/galeio/gale/internal/h2frame"
)

// h2Preface is the client connection preface (RFC 9113 §3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// h2MaxFrame is the largest frame h2Greet reads: the protocol's least
// SETTINGS_MAX_FRAME_SIZE, which it leaves at its default.
const h2MaxFrame = 16 << 10

// h2Greet is h2-idle's exchange: it opens HTTP/2 on c by prior knowledge
// (the preface, an empty SETTINGS frame), makes one GET of HelloPath on
// stream 1, and reads until it has the server's SETTINGS (acknowledged),
// the acknowledgement of its own, and the whole answer, HelloBody with
// status 200. The connection is then idle, with nothing left unanswered
// either way: the server holds what it keeps for an idle HTTP/2
// connection. checkH2 has checked the answer's headers with a real
// client; this one checks only that the status is 200 as the static
// table's entry 8 (RFC 7541 Appendix A), the way HPACK encoders write it.
func h2Greet(c net.Conn) error {
	c.SetDeadline(time.Now().Add(httpTimeout))
	defer c.SetDeadline(time.Time{})
	out := append([]byte(h2Preface), h2frame.AppendSettings(nil, false)...)
	out = h2frame.AppendHeaders(out, 1, true, true, h2HelloBlock(c.RemoteAddr().String()))
	if _, err := c.Write(out); err != nil {
		return err
	}
	var g h2Greeting
	buf := make([]byte, 0, 4096)
	for !g.done() {
		f, n, err := h2frame.Next(buf, h2MaxFrame)
		if err != nil {
			return err
		}
		if n == 0 {
			if buf, err = readMore(c, buf); err != nil {
				return fmt.Errorf("HTTP/2 GET %s: %w", HelloPath, err)
			}
			continue
		}
		if err := g.frame(c, f); err != nil {
			return fmt.Errorf("HTTP/2 GET %s: %w", HelloPath, err)
		}
		buf = append(buf[:0], buf[n:]...)
	}
	return nil
}

// readMore appends to buf what c has to read, growing buf as needed.
func readMore(c net.Conn, buf []byte) ([]byte, error) {
	if len(buf) == cap(buf) {
		buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
	}
	n, err := c.Read(buf[len(buf):cap(buf)])
	return buf[:len(buf)+n], err
}

// h2HelloBlock is the HPACK header block of a GET of HelloPath over h2c
// from authority (RFC 7541), written as clients such as h2load and
// net/http's write theirs: :method GET and :scheme http indexed (static
// entries 2 and 6), :path literal on the static name 4, :authority and
// user-agent literal with incremental indexing on the static names 1
// and 58, so that the server's decoder keeps them in its dynamic table,
// as it does for a real client. No string is Huffman-coded.
func h2HelloBlock(authority string) []byte {
	b := []byte{0x82, 0x86}
	b = appendHPACKLiteral(b, 0x00, 4, 4, HelloPath)
	b = appendHPACKLiteral(b, 0x40, 6, 1, authority)
	return appendHPACKLiteral(b, 0x40, 6, 58, "galebench")
}

// appendHPACKLiteral appends a literal field whose name is the static
// table's entry name: with incremental indexing (flags 0x40, a 6-bit
// prefix, RFC 7541 §6.2.1) or without (flags 0, a 4-bit prefix,
// §6.2.2); its value a raw string (§5.2).
func appendHPACKLiteral(b []byte, flags byte, prefix uint, name uint64, value string) []byte {
	b = appendHPACKInt(b, flags, prefix, name)
	return append(appendHPACKInt(b, 0, 7, uint64(len(value))), value...)
}

// appendHPACKInt appends x with an n-bit prefix, the first byte's other
// bits flags (RFC 7541 §5.1).
func appendHPACKInt(b []byte, flags byte, n uint, x uint64) []byte {
	limit := uint64(1)<<n - 1
	if x < limit {
		return append(b, flags|byte(x))
	}
	b = append(b, flags|byte(limit))
	for x -= limit; x >= 128; x >>= 7 {
		b = append(b, byte(x&127|128))
	}
	return append(b, byte(x))
}

// h2Greeting is what h2Greet has received so far.
type h2Greeting struct {
	settings, acked, headers, ended bool
	body                            []byte
}

// done reports whether the exchange is over.
func (g *h2Greeting) done() bool { return g.settings && g.acked && g.ended }

// frame takes in one frame from the server, acknowledging its SETTINGS
// on c. WINDOW_UPDATE, PING and unknown frames are let be; a reset or
// GOAWAY fails the exchange.
func (g *h2Greeting) frame(c net.Conn, f h2frame.Frame) error {
	switch f.Type {
	case h2frame.TypeSettings:
		if err := f.Settings(func(h2frame.Setting) error { return nil }); err != nil {
			return err
		}
		if f.Flags.Has(h2frame.FlagAck) {
			g.acked = true
			return nil
		}
		g.settings = true
		_, err := c.Write(h2frame.AppendSettings(nil, true))
		return err
	case h2frame.TypeHeaders:
		return g.headersFrame(f)
	case h2frame.TypeData:
		return g.data(f)
	case h2frame.TypeRSTStream, h2frame.TypeGoAway:
		return fmt.Errorf("the server sent %v", f.Type)
	}
	return nil
}

// headersFrame checks the response's header block: whole in one frame,
// status 200, a body to follow.
func (g *h2Greeting) headersFrame(f h2frame.Frame) error {
	block, _, err := f.Headers()
	switch {
	case err != nil:
		return err
	case f.StreamID != 1 || g.headers:
		return fmt.Errorf("HEADERS on stream %d, want one on stream 1", f.StreamID)
	case !f.Flags.Has(h2frame.FlagEndHeaders):
		return errors.New("the response's header block is continued, want it in one frame")
	case len(skipTableSizeUpdates(block)) == 0 || skipTableSizeUpdates(block)[0] != 0x88:
		return fmt.Errorf("the response's header block begins %x, want 88 (:status 200), after any table size update", block[:min(len(block), 8)])
	case f.Flags.Has(h2frame.FlagEndStream):
		return errors.New("a response without a body")
	}
	g.headers = true
	return nil
}

// data takes in a DATA frame of the response, and checks the body at
// its end.
func (g *h2Greeting) data(f h2frame.Frame) error {
	p, err := f.Data()
	switch {
	case err != nil:
		return err
	case f.StreamID != 1 || !g.headers || g.ended:
		return fmt.Errorf("DATA on stream %d out of turn", f.StreamID)
	}
	g.body = append(g.body, p...)
	if !f.Flags.Has(h2frame.FlagEndStream) {
		return nil
	}
	g.ended = true
	if string(g.body) != HelloBody {
		return fmt.Errorf("body %.32q, want %q", g.body, HelloBody)
	}
	return nil
}

// skipTableSizeUpdates returns block past the dynamic table size updates
// that may begin it (RFC 7541 §6.3: 001xxxxx, the size as a 5-bit prefix
// integer): a server that uses a smaller table than the client allows
// says so there.
func skipTableSizeUpdates(block []byte) []byte {
	for len(block) > 0 && block[0]&0xe0 == 0x20 {
		n := 1
		if block[0]&0x1f == 0x1f { // the size goes on in 7-bit groups
			for n < len(block) && block[n]&0x80 != 0 {
				n++
			}
			n++
		}
		block = block[min(n, len(block)):]
	}
	return block
}
