package websocket

import (
	"bytes"
	"compress/flate"
	"errors"
	"testing"
)

// FuzzInflate feeds arbitrary payloads to inflate: it must never panic,
// never return more than the limit, and fail only with ErrReadLimit or a
// 1007 ProtocolError. With takeover the window is primed with text first,
// so that back references into it are exercised.
func FuzzInflate(f *testing.F) {
	f.Add([]byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}, uint16(100), false)
	f.Add([]byte{0xf2, 0x00, 0x11, 0x00, 0x00}, uint16(100), true)
	f.Add([]byte{0x00}, uint16(0), false)
	f.Add([]byte{0x03, 0x02, 0x00}, uint16(10), true)
	f.Add(compress(nil, msgText[:2000], flate.BestSpeed, 15), uint16(1000), false)
	f.Add(compress(nil, bytes.Repeat([]byte{0}, 60000), flate.BestCompression, 15), uint16(5000), true)
	f.Fuzz(func(t *testing.T, wire []byte, limit uint16, takeover bool) {
		st := zeroState
		if takeover {
			st.inTakeover, st.win = true, newWindow(15)
			st.win.add(msgText[:1000])
		}
		got, err := st.inflate(nil, wire, int(limit))
		var pe *ProtocolError
		switch {
		case err == nil && len(got) > int(limit):
			t.Fatalf("inflate(%x, %d) = %d bytes, want at most the limit", wire, limit, len(got))
		case err == nil:
		case err == ErrReadLimit, errors.As(err, &pe) && pe.Code == StatusInvalidFramePayload:
			if len(got) != 0 {
				t.Fatalf("inflate(%x, %d) = %d bytes, %v, want none with the error", wire, limit, len(got), err)
			}
		default:
			t.Fatalf("inflate(%x, %d) = %v, want ErrReadLimit or a 1007 ProtocolError", wire, limit, err)
		}
		if takeover && err == nil {
			// The window got the message.
			if w := st.win.bytes(); !bytes.HasSuffix(w, got) || len(w) > 1<<15 {
				t.Fatalf("window after inflate = %d bytes not ending with the message's %d", len(w), len(got))
			}
		}
	})
}

// FuzzRoundTrip compresses arbitrary messages whole and streamed (cut at
// arbitrary points), at arbitrary levels and window bits: both must
// inflate back to the message.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(""), int8(1), uint8(15), uint16(0), uint16(0))
	f.Add([]byte("Hello"), int8(-2), uint8(9), uint16(1), uint16(3))
	f.Add(msgText[:300], int8(9), uint8(15), uint16(100), uint16(200))
	f.Add(msgRandom1M[:300], int8(6), uint8(8), uint16(0), uint16(300))
	f.Fuzz(func(t *testing.T, msg []byte, level int8, bits uint8, cut1, cut2 uint16) {
		lvl := int(level) % (flate.BestCompression + 3) // mostly valid, some not
		st := zeroState
		wire := compress(nil, msg, lvl, bits)
		if got, err := st.inflate(nil, wire, len(msg)); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("inflate(compress(%q, %d, %d)) = %q, %v", msg, lvl, bits, got, err)
		}
		a := min(int(cut1), len(msg))
		b := min(max(int(cut2), a), len(msg))
		s := newDeflateStream(lvl, bits)
		var sw []byte
		for _, p := range [][]byte{msg[:a], msg[a:b], msg[b:]} {
			sw = s.write(sw, p)
		}
		sw = s.finish(sw)
		if got, err := st.inflate(nil, sw, len(msg)); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("inflate(stream(%q cut at %d, %d; %d, %d)) = %q, %v", msg, a, b, lvl, bits, got, err)
		}
	})
}

// FuzzNegotiate feeds arbitrary headers to both ends' negotiation: never a
// panic, and whatever the server answers, our client (which accepts the
// server's takeover) accepts.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{
		offerAutobahn, offerChrome, offerFirefox, offerAutobahnT0,
		autobahnOffer(true, 9) + ", " + autobahnOffer(false, 0),
		`permessage-deflate; client_max_window_bits="10"; server_max_window_bits=12`,
		`a; b="c\"d", permessage-deflate;`,
	} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, header string, takeover bool) {
		mode := CompressionEnabled
		if takeover {
			mode = CompressionContextTakeover
		}
		st, response, ok := negotiateServer([]string{header}, mode)
		if ok != st.on || ok != (response != "") {
			t.Fatalf("negotiateServer(%q) = %+v, %q, %v: inconsistent", header, st, response, ok)
		}
		if ok {
			if _, err := acceptResponse([]string{response}, CompressionContextTakeover); err != nil {
				t.Fatalf("negotiateServer(%q) answered %q, which acceptResponse rejects: %v", header, response, err)
			}
		}
		if _, err := acceptResponse([]string{header}, mode); err != nil && !errors.Is(err, ErrBadHandshake) {
			t.Fatalf("acceptResponse(%q) = %v, want an error wrapping ErrBadHandshake", header, err)
		}
	})
}
