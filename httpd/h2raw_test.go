package httpd_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2raw is a hand-driven HTTP/2 client (x/net's Framer) for tests that
// break the protocol's rules or push on its bounds.
type h2raw struct {
	t   testing.TB
	c   net.Conn
	fr  *http2.Framer
	enc *hpack.Encoder
	dec *hpack.Decoder // every response block goes through it, in order
	buf bytes.Buffer

	peerSettings map[http2.SettingID]bool // the server's SETTINGS, by ID
}

// dialH2 connects to addr with prior knowledge, sends the preface and
// settings, and reads the server's SETTINGS.
func dialH2(t testing.TB, addr string, settings ...http2.Setting) *h2raw {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := startH2(t, c)
	if err := r.fr.WriteSettings(settings...); err != nil {
		t.Fatal(err)
	}
	for {
		f := r.read()
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			r.peerSettings = make(map[http2.SettingID]bool)
			sf.ForeachSetting(func(s http2.Setting) error {
				r.peerSettings[s.ID] = s.Val != 0
				return nil
			})
			r.fr.WriteSettingsAck()
			return r
		}
	}
}

// startH2 drives c as a client that sent the preface, nothing else.
func startH2(t testing.TB, c net.Conn) *h2raw {
	t.Helper()
	r := &h2raw{t: t, c: c, fr: http2.NewFramer(c, c)}
	r.fr.ReadMetaHeaders = nil
	r.fr.SetMaxReadFrameSize(1 << 20)
	r.enc, r.dec = newHPACK(&r.buf)
	if _, err := io.WriteString(c, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	return r
}

// data reads frames until DATA on stream id, and returns its payload.
func (r *h2raw) data(id uint32) string {
	r.t.Helper()
	for {
		switch f := r.read().(type) {
		case *http2.DataFrame:
			if f.StreamID == id {
				return string(f.Data())
			}
		case *http2.HeadersFrame:
			r.dec.DecodeFull(f.HeaderBlockFragment())
		case *http2.RSTStreamFrame:
			r.t.Fatalf("RST_STREAM %v on stream %d", f.ErrCode, f.StreamID)
		}
	}
}

// read returns the next frame; the test fails on an error.
func (r *h2raw) read() http2.Frame {
	r.t.Helper()
	f, err := r.fr.ReadFrame()
	if err != nil {
		r.t.Fatalf("reading a frame: %v", err)
	}
	return f
}

// block encodes a request's header block: GET path, then extra fields
// in pairs.
func (r *h2raw) block(method, path string, extra ...string) []byte {
	r.buf.Reset()
	r.enc.WriteField(hpack.HeaderField{Name: ":method", Value: method})
	r.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
	r.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: "example.com"})
	r.enc.WriteField(hpack.HeaderField{Name: ":path", Value: path})
	for i := 0; i+1 < len(extra); i += 2 { // pseudo-header fields first
		if strings.HasPrefix(extra[i], ":") {
			r.enc.WriteField(hpack.HeaderField{Name: extra[i], Value: extra[i+1]})
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if !strings.HasPrefix(extra[i], ":") {
			r.enc.WriteField(hpack.HeaderField{Name: extra[i], Value: extra[i+1]})
		}
	}
	return append([]byte(nil), r.buf.Bytes()...)
}

// request opens stream id with a request for path, ended when end.
func (r *h2raw) request(id uint32, method, path string, end bool, extra ...string) error {
	return r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: r.block(method, path, extra...), EndStream: end, EndHeaders: true})
}

// goAway reads frames until GOAWAY, and returns its code, or fails the
// test if the connection ends first. Frames before it are dropped.
func (r *h2raw) goAway() http2.ErrCode {
	r.t.Helper()
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			r.t.Fatalf("no GOAWAY before %v", err)
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			return g.ErrCode
		}
	}
}

// closedWithin reports whether the server ends the connection (with or
// without a GOAWAY) within d, reading and dropping what it sends.
func (r *h2raw) closedWithin(d time.Duration) bool {
	r.c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, r.c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// status reads frames until stream id's response HEADERS or RST_STREAM,
// and returns the :status, or the reset's code as "RST_STREAM <code>".
func (r *h2raw) status(id uint32) string {
	r.t.Helper()
	for {
		f := r.read()
		switch f := f.(type) {
		case *http2.HeadersFrame:
			fields, err := r.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				r.t.Fatal(err)
			}
			if f.StreamID != id {
				continue
			}
			for _, hf := range fields {
				if hf.Name == ":status" {
					return hf.Value
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return "RST_STREAM " + f.ErrCode.String()
			}
		case *http2.GoAwayFrame:
			r.t.Fatalf("GOAWAY %v waiting for stream %d", f.ErrCode, id)
		}
	}
}

// newHPACK returns an encoder writing to buf and a decoder.
func newHPACK(buf *bytes.Buffer) (*hpack.Encoder, *hpack.Decoder) {
	return hpack.NewEncoder(buf), hpack.NewDecoder(4096, nil)
}
