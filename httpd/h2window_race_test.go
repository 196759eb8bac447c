package httpd_test

import (
	"crypto/tls"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// TestH2WindowRaisedAfterHeaders is h2spec's case 6.9.2/1 over and over,
// over TLS: the client shuts every stream's window (SETTINGS_INITIAL_
// WINDOW_SIZE 0), asks for a response, then opens the window by one byte:
// the server must acknowledge the SETTINGS, then send that byte. h2spec
// waits for the ACK and drops the frames before it: in CI it timed out
// once, on io_uring, because a handler that reached its first write
// between the window's change and the ACK sent its byte first.
func TestH2WindowRaisedAfterHeaders(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		srv := h2OnlyServer(false)
		addr := startTLSWith(t, srv, h2Handler())
		for i := range 200 {
			windowRaised(t, addr, i)
		}
	})
}

// windowRaised runs the case once on a new connection (the i-th): the
// test fails unless the ACK of the SETTINGS that opened the window comes,
// then a one-byte DATA frame on stream 1, within 3 s.
func windowRaised(t *testing.T, addr string, i int) {
	t.Helper()
	cfg := tlstest.Get().ClientConfig()
	cfg.NextProtos = []string{"h2"}
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := startH2(t, c)
	r.fr.WriteSettings()
	r.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	for acks := 0; acks < 2; { // the server's SETTINGS, and its ACKs of our two
		if f, ok := r.read().(*http2.SettingsFrame); ok && f.IsAck() {
			acks++
		} else if ok {
			r.fr.WriteSettingsAck()
		}
	}
	if err := r.request(1, "GET", "/", true); err != nil {
		t.Fatal(err)
	}
	r.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1})
	c.SetDeadline(time.Now().Add(3 * time.Second))
	acked := false
	for {
		f, err := r.fr.ReadFrame()
		if err != nil {
			t.Fatalf("connection %d: %v, before the ACK and a DATA frame (acked %v)", i, err, acked)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			acked = acked || f.IsAck()
		case *http2.DataFrame:
			if f.StreamID != 1 {
				continue
			}
			if !acked {
				t.Fatalf("connection %d: DATA before the ACK of the SETTINGS that opened its window", i)
			}
			if len(f.Data()) != 1 {
				t.Fatalf("connection %d: DATA of %d bytes, want 1", i, len(f.Data()))
			}
			return
		}
	}
}
