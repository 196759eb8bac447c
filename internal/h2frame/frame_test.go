package h2frame_test

import (
	"bytes"
	"errors"
	"testing"

	"golang.org/x/net/http2"

	"github.com/galeio/gale/internal/h2frame"
)

// TestReadsFramer: frames x/net/http2's Framer writes, one after the
// other in one buffer, are read back by Next and the typed accessors
// with the same contents, and Next asks for more at every cut short of
// a whole frame.
func TestReadsFramer(t *testing.T) {
	var buf bytes.Buffer
	fr := http2.NewFramer(&buf, nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 20}, http2.Setting{ID: http2.SettingEnablePush, Val: 0}))
	must(fr.WriteSettingsAck())
	must(fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte("block"), EndHeaders: false,
		PadLength: 3, Priority: http2.PriorityParam{StreamDep: 0, Weight: 15, Exclusive: true}}))
	must(fr.WriteContinuation(1, true, []byte("more")))
	must(fr.WriteDataPadded(1, true, []byte("hello"), []byte{0, 0}))
	must(fr.WritePing(true, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}))
	must(fr.WriteWindowUpdate(0, 1000))
	must(fr.WriteRSTStream(3, http2.ErrCodeCancel))
	must(fr.WritePriority(5, http2.PriorityParam{StreamDep: 1, Weight: 7}))
	must(fr.WriteGoAway(7, http2.ErrCodeEnhanceYourCalm, []byte("calm")))
	wire := buf.Bytes()

	var got []string
	for b := wire; len(b) > 0; {
		for cut := 0; cut < h2frame.HeaderLen; cut++ {
			if _, n, err := h2frame.Next(b[:cut], 1<<20); n != 0 || err != nil {
				t.Fatalf("Next of %d bytes = %d, %v; want 0, nil", cut, n, err)
			}
		}
		f, n, err := h2frame.Next(b, 1<<20)
		if err != nil || n == 0 {
			t.Fatalf("Next = %d, %v", n, err)
		}
		if _, m, _ := h2frame.Next(b[:n-1], 1<<20); m != 0 {
			t.Fatalf("Next of a frame short of one byte = %d, want 0", m)
		}
		got = append(got, describe(t, f))
		b = b[n:]
	}
	want := []string{
		"SETTINGS [{SETTINGS_MAX_FRAME_SIZE 1048576} {SETTINGS_ENABLE_PUSH 0}]",
		"SETTINGS ack",
		"HEADERS 1 \"block\" dep 0 weight 15 excl true",
		"CONTINUATION 1 \"more\" end true",
		"DATA 1 \"hello\" end true",
		"PING ack [1 2 3 4 5 6 7 8]",
		"WINDOW_UPDATE 0 1000",
		"RST_STREAM 3 CANCEL",
		"PRIORITY 5 dep 1 weight 7",
		"GOAWAY 7 ENHANCE_YOUR_CALM \"calm\"",
	}
	if len(got) != len(want) {
		t.Fatalf("read %d frames, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("frame %d = %s, want %s", i, got[i], want[i])
		}
	}
}

// TestFramerReads: the frames the Append functions write are read back
// by x/net/http2's Framer.
func TestFramerReads(t *testing.T) {
	var b []byte
	b = h2frame.AppendSettings(b, false, h2frame.Setting{ID: h2frame.SettingMaxConcurrentStreams, Val: 100})
	b = h2frame.AppendSettings(b, true)
	b = h2frame.AppendHeaders(b, 1, false, false, []byte("head"))
	b = h2frame.AppendContinuation(b, 1, true, []byte("ers"))
	b = h2frame.AppendData(b, 1, true, []byte("body"))
	b = h2frame.AppendPing(b, false, [8]byte{8, 7, 6, 5, 4, 3, 2, 1})
	b = h2frame.AppendWindowUpdate(b, 1, 65535)
	b = h2frame.AppendRSTStream(b, 1, h2frame.ErrCodeStreamClosed)
	b = h2frame.AppendGoAway(b, 1, h2frame.ErrCodeNo, nil)
	fr := http2.NewFramer(nil, bytes.NewReader(b))
	fr.AllowIllegalReads = true // CONTINUATION after HEADERS is checked, not the contents
	var got []string
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			break
		}
		got = append(got, f.Header().Type.String())
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				if v, ok := f.Value(http2.SettingMaxConcurrentStreams); !ok || v != 100 {
					t.Errorf("SETTINGS_MAX_CONCURRENT_STREAMS = %d, %v", v, ok)
				}
			}
		case *http2.DataFrame:
			if string(f.Data()) != "body" || !f.StreamEnded() {
				t.Errorf("DATA = %q, end %v", f.Data(), f.StreamEnded())
			}
		case *http2.WindowUpdateFrame:
			if f.Increment != 65535 || f.StreamID != 1 {
				t.Errorf("WINDOW_UPDATE = %d on %d", f.Increment, f.StreamID)
			}
		case *http2.RSTStreamFrame:
			if f.ErrCode != http2.ErrCodeStreamClosed {
				t.Errorf("RST_STREAM = %v", f.ErrCode)
			}
		case *http2.PingFrame:
			if f.Data != [8]byte{8, 7, 6, 5, 4, 3, 2, 1} {
				t.Errorf("PING = %v", f.Data)
			}
		}
	}
	want := "[SETTINGS SETTINGS HEADERS CONTINUATION DATA PING WINDOW_UPDATE RST_STREAM GOAWAY]"
	if s := "[" + join(got) + "]"; s != want {
		t.Errorf("the Framer read %s, want %s", s, want)
	}
}

func join(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x)
	}
	return b.String()
}

// TestErrors: each rule of RFC 9113 §6 a frame can break, with the
// error (connection or stream, and its code) it is.
func TestErrors(t *testing.T) {
	hdr := func(length uint32, typ h2frame.Type, fl h2frame.Flags, stream uint32, payload ...byte) h2frame.Frame {
		return h2frame.Frame{Header: h2frame.Header{Length: length, Type: typ, Flags: fl, StreamID: stream}, Payload: payload}
	}
	settings := func(f h2frame.Frame) error { return f.Settings(func(h2frame.Setting) error { return nil }) }
	for _, tc := range []struct {
		name   string
		check  func() error
		stream uint32
		code   h2frame.ErrCode
	}{
		{"DATA on stream 0", func() error { _, err := hdr(1, h2frame.TypeData, 0, 0, 'x').Data(); return err }, 0, h2frame.ErrCodeProtocol},
		{"DATA padding too long", func() error { _, err := hdr(2, h2frame.TypeData, h2frame.FlagPadded, 1, 2, 'x').Data(); return err }, 0, h2frame.ErrCodeProtocol},
		{"HEADERS on stream 0", func() error { _, _, err := hdr(0, h2frame.TypeHeaders, 0, 0).Headers(); return err }, 0, h2frame.ErrCodeProtocol},
		{"HEADERS depends on itself", func() error {
			_, _, err := hdr(5, h2frame.TypeHeaders, h2frame.FlagPriority, 3, 0, 0, 0, 3, 9).Headers()
			return err
		}, 3, h2frame.ErrCodeProtocol},
		{"PRIORITY of 4 bytes", func() error { _, err := hdr(4, h2frame.TypePriority, 0, 1, 0, 0, 0, 0).Priority(); return err }, 1, h2frame.ErrCodeFrameSize},
		{"RST_STREAM on stream 0", func() error { _, err := hdr(4, h2frame.TypeRSTStream, 0, 0, 0, 0, 0, 8).RSTStream(); return err }, 0, h2frame.ErrCodeProtocol},
		{"RST_STREAM of 3 bytes", func() error { _, err := hdr(3, h2frame.TypeRSTStream, 0, 1, 0, 0, 8).RSTStream(); return err }, 0, h2frame.ErrCodeFrameSize},
		{"SETTINGS on stream 1", func() error { return settings(hdr(0, h2frame.TypeSettings, 0, 1)) }, 0, h2frame.ErrCodeProtocol},
		{"SETTINGS ack with a body", func() error { return settings(hdr(6, h2frame.TypeSettings, h2frame.FlagAck, 0, 0, 1, 0, 0, 0, 0)) }, 0, h2frame.ErrCodeFrameSize},
		{"SETTINGS of 5 bytes", func() error { return settings(hdr(5, h2frame.TypeSettings, 0, 0, 0, 1, 0, 0, 0)) }, 0, h2frame.ErrCodeFrameSize},
		{"ENABLE_PUSH 2", func() error { return settings(hdr(6, h2frame.TypeSettings, 0, 0, 0, 2, 0, 0, 0, 2)) }, 0, h2frame.ErrCodeProtocol},
		{"INITIAL_WINDOW_SIZE 2^31", func() error { return settings(hdr(6, h2frame.TypeSettings, 0, 0, 0, 4, 0x80, 0, 0, 0)) }, 0, h2frame.ErrCodeFlowControl},
		{"MAX_FRAME_SIZE 2^14-1", func() error { return settings(hdr(6, h2frame.TypeSettings, 0, 0, 0, 5, 0, 0, 0x3f, 0xff)) }, 0, h2frame.ErrCodeProtocol},
		{"PING on stream 1", func() error { _, err := hdr(8, h2frame.TypePing, 0, 1, make([]byte, 8)...).Ping(); return err }, 0, h2frame.ErrCodeProtocol},
		{"PING of 7 bytes", func() error { _, err := hdr(7, h2frame.TypePing, 0, 0, make([]byte, 7)...).Ping(); return err }, 0, h2frame.ErrCodeFrameSize},
		{"GOAWAY on stream 1", func() error {
			_, _, _, err := hdr(8, h2frame.TypeGoAway, 0, 1, make([]byte, 8)...).GoAway()
			return err
		}, 0, h2frame.ErrCodeProtocol},
		{"GOAWAY of 7 bytes", func() error {
			_, _, _, err := hdr(7, h2frame.TypeGoAway, 0, 0, make([]byte, 7)...).GoAway()
			return err
		}, 0, h2frame.ErrCodeFrameSize},
		{"WINDOW_UPDATE of 0 on a stream", func() error { _, err := hdr(4, h2frame.TypeWindowUpdate, 0, 5, 0, 0, 0, 0).WindowUpdate(); return err }, 5, h2frame.ErrCodeProtocol},
		{"WINDOW_UPDATE of 0 on the connection", func() error { _, err := hdr(4, h2frame.TypeWindowUpdate, 0, 0, 0, 0, 0, 0).WindowUpdate(); return err }, 0, h2frame.ErrCodeProtocol},
		{"WINDOW_UPDATE of 3 bytes", func() error { _, err := hdr(3, h2frame.TypeWindowUpdate, 0, 0, 0, 0, 1).WindowUpdate(); return err }, 0, h2frame.ErrCodeFrameSize},
		{"CONTINUATION on stream 0", func() error { _, err := hdr(0, h2frame.TypeContinuation, 0, 0).Continuation(); return err }, 0, h2frame.ErrCodeProtocol},
		{"a frame over MAX_FRAME_SIZE", func() error {
			_, _, err := h2frame.Next(h2frame.AppendData(nil, 1, false, make([]byte, 1<<14+1)), 1<<14)
			return err
		}, 0, h2frame.ErrCodeFrameSize},
	} {
		err := tc.check()
		var e *h2frame.Error
		if !errors.As(err, &e) || e.Stream != tc.stream || e.Code != tc.code {
			t.Errorf("%s: %v; want stream %d error %v", tc.name, err, tc.stream, tc.code)
		}
	}
}
