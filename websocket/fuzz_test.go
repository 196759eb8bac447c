package websocket_test

import (
	"errors"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// FuzzServerFrames sends arbitrary bytes, cut in two writes at any point,
// to a server after a valid handshake, then half-closes. Whatever the
// bytes, the loop must not panic, the connection must end (the server
// does not wait forever on a frame that cannot finish: the client's
// half-close ends it), and OnClose must run exactly once.
func FuzzServerFrames(f *testing.F) {
	for _, seed := range [][]byte{
		rawFrame(0x81, true, []byte("hello")),
		append(rawFrame(0x01, true, []byte("he")), rawFrame(0x80, true, []byte("llo"))...),
		append(rawFrame(0x89, true, []byte("ping")), rawFrame(0x88, true, closePayload(1000, "ok"))...),
		rawFrame(0x82, true, make([]byte, 70000)),
		rawFrame(0xc1, true, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}),
		{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4},
	} {
		f.Add(seed, uint16(len(seed)/2))
	}
	srv := &counting{}
	u := &websocket.Upgrader{Options: websocket.Options{Handler: srv, ReadLimit: 1 << 16, Compression: websocket.CompressionEnabled}}
	url := serveWS(f, u, false)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		rc, _ := rawDial(t, url)
		at := min(int(cut), len(data))
		rc.nc.Write(data[:at])
		rc.nc.Write(data[at:])
		rc.nc.(interface{ CloseWrite() error }).CloseWrite()
		rc.nc.SetReadDeadline(time.Now().Add(testTimeout))
		if _, err := io.Copy(io.Discard, rc.r); err != nil && !isReset(err) {
			t.Fatalf("the connection did not end: %v", err)
		}
		srv.wait(t)
	})
}

// counting counts opens and closes, and checks they pair up.
type counting struct {
	websocket.BaseHandler
	mu            sync.Mutex
	opens, closes int
	doubleClosed  bool
}

func (h *counting) OnOpen(*websocket.Conn) { h.mu.Lock(); h.opens++; h.mu.Unlock() }
func (h *counting) OnClose(*websocket.Conn, error) {
	h.mu.Lock()
	h.closes++
	h.doubleClosed = h.doubleClosed || h.closes > h.opens
	h.mu.Unlock()
}

// wait waits until every open connection has closed.
func (h *counting) wait(t *testing.T) {
	deadline := time.Now().Add(testTimeout)
	for {
		h.mu.Lock()
		done, bad := h.opens == h.closes, h.doubleClosed
		h.mu.Unlock()
		if bad {
			t.Fatal("OnClose ran more often than OnOpen")
		}
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("OnClose did not run")
		}
		time.Sleep(time.Millisecond)
	}
}

func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }
