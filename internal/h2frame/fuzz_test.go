package h2frame_test

import (
	"testing"

	"github.com/galeio/gale/internal/h2frame"
)

// FuzzNext: Next and every accessor take any bytes without panicking,
// and a frame Next returns lies within the buffer it was given.
func FuzzNext(f *testing.F) {
	f.Add(h2frame.AppendSettings(nil, false, h2frame.Setting{ID: h2frame.SettingMaxFrameSize, Val: 1 << 14}))
	f.Add(h2frame.AppendHeaders(nil, 1, true, true, []byte("x")))
	f.Add([]byte{0, 0, 5, 1, 0x28, 0, 0, 0, 1, 4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			fr, n, err := h2frame.Next(b, 1<<24-1)
			if err != nil || n == 0 {
				return
			}
			if n > len(b) || len(fr.Payload) != int(fr.Length) {
				t.Fatalf("Next = %d bytes, payload %d, of %d", n, len(fr.Payload), len(b))
			}
			fr.Data()
			fr.Headers()
			fr.Priority()
			fr.RSTStream()
			fr.Settings(func(h2frame.Setting) error { return nil })
			fr.Ping()
			fr.GoAway()
			fr.WindowUpdate()
			fr.Continuation()
			b = b[n:]
		}
	})
}
