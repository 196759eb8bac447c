package websocket_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// TestServerRefuses sends frames RFC 6455 forbids a client to send and
// checks the server fails the connection with the right close code (§7.4.1)
// and reports why in OnClose.
func TestServerRefuses(t *testing.T) {
	big := bytes.Repeat([]byte("z"), 2000)
	for _, tc := range []struct {
		name   string
		frames [][]byte
		code   int
	}{
		{"unmasked", [][]byte{rawFrame(0x81, false, []byte("hi"))}, 1002},
		{"RSV2", [][]byte{rawFrame(0xa1, true, []byte("hi"))}, 1002},
		{"RSV1 without deflate", [][]byte{rawFrame(0xc1, true, []byte("hi"))}, 1002},
		{"opcode 3", [][]byte{rawFrame(0x83, true, nil)}, 1002},
		{"opcode 11", [][]byte{rawFrame(0x8b, true, nil)}, 1002},
		{"fragmented ping", [][]byte{rawFrame(0x09, true, nil)}, 1002},
		{"ping of 126 bytes", [][]byte{rawFrame(0x89, true, bytes.Repeat([]byte("p"), 126))}, 1002},
		{"continuation first", [][]byte{rawFrame(0x80, true, []byte("x"))}, 1002},
		{"text in a text", [][]byte{rawFrame(0x01, true, []byte("a")), rawFrame(0x81, true, []byte("b"))}, 1002},
		{"invalid UTF-8", [][]byte{rawFrame(0x81, true, []byte("\xce\xba\xed\xa0\x80"))}, 1007},
		{"UTF-8 cut at the end", [][]byte{rawFrame(0x01, true, []byte("ok\xe2\x82")), rawFrame(0x80, true, nil)}, 1007},
		{"close of one byte", [][]byte{rawFrame(0x88, true, []byte{3})}, 1002},
		{"close 999", [][]byte{rawFrame(0x88, true, closePayload(999, ""))}, 1002},
		{"close 1005", [][]byte{rawFrame(0x88, true, closePayload(1005, ""))}, 1002},
		{"close 1016", [][]byte{rawFrame(0x88, true, closePayload(1016, ""))}, 1002},
		{"close 5000", [][]byte{rawFrame(0x88, true, closePayload(5000, ""))}, 1002},
		{"close reason not UTF-8", [][]byte{rawFrame(0x88, true, closePayload(1000, "\xff"))}, 1007},
		{"over the read limit", [][]byte{rawFrame(0x82, true, big)}, 1009},
		{"over the read limit in fragments", [][]byte{rawFrame(0x02, true, big[:900]), rawFrame(0x80, true, big[:900])}, 1009},
		{"length that overflows the sum", [][]byte{rawFrame(0x02, true, []byte("0123456789")),
			{0x80, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfa, 1, 2, 3, 4}}, 1009},
		{"length with its top bit", [][]byte{{0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4}}, 1002},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRecorder(true)
			url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv, ReadLimit: 1000}}, false)
			rc, _ := rawDial(t, url)
			srv.expect(t, "open")
			for _, f := range tc.frames {
				rc.nc.Write(f)
			}
			rc.expectClose(tc.code)
			ev := srv.expect(t, "close")
			var pe *websocket.ProtocolError
			switch {
			case tc.code == 1009 && !errors.Is(ev.err, websocket.ErrReadLimit),
				tc.code != 1009 && (!errors.As(ev.err, &pe) || int(pe.Code) != tc.code):
				t.Errorf("OnClose(%v), want the reason for %d", ev.err, tc.code)
			}
		})
	}
}

// TestUTF8FailFast checks that a text message invalid in its first
// fragment fails the connection at once, before the rest is sent
// (Autobahn 6.4).
func TestUTF8FailFastServer(t *testing.T) {
	srv := newRecorder(true)
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false)
	rc, _ := rawDial(t, url)
	rc.frame(0x01, true, []byte("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xf4\x90\x80\x80"))
	rc.expectClose(1007) // no more fragments were sent
}

// TestFragmentsAndControl sends a text message in fragments, empty ones
// among them, with pings between, and checks the pongs come back at once
// and the message whole, and that OnPing sees the pings.
func TestFragmentsAndControl(t *testing.T) {
	srv := newRecorder(true)
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false)
	rc, _ := rawDial(t, url)
	srv.expect(t, "open")
	rc.frame(0x01, true, []byte("κό"))
	rc.frame(0x89, true, []byte("p1"))
	rc.frame(0x00, true, nil)
	rc.frame(0x00, true, []byte("σμ\xce"))
	rc.frame(0x8a, true, []byte("unsolicited"))
	rc.frame(0x89, true, nil)
	rc.frame(0x80, true, []byte("\xb5"))
	want := []string{"\x8a p1", "\x8a ", "\x81 κόσμε"}
	for _, w := range want {
		f, err := rc.read()
		if err != nil {
			t.Fatal(err)
		}
		if got := string([]byte{f.b0}) + " " + string(f.payload); got != w {
			t.Fatalf("frame %q, want %q", got, w)
		}
		if f.masked {
			t.Fatal("server frame masked")
		}
	}
	srv.expect(t, "ping", "p1")
	srv.expect(t, "pong", "unsolicited")
	srv.expect(t, "ping", "")
	srv.expect(t, "msg", "κόσμε")
	rc.frame(0x88, true, nil)
	rc.expectClose(1005) // an empty close is answered empty
	if ev := srv.expect(t, "close"); websocket.CloseStatus(ev.err) != websocket.StatusNoStatusRcvd {
		t.Errorf("OnClose(%v), want 1005", ev.err)
	}
}

// TestHandshakeRefused checks the answers to requests that are not valid
// upgrades.
func TestHandshakeRefused(t *testing.T) {
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: newRecorder(true)}}, false)
	for _, tc := range []struct {
		name  string
		extra []string
		want  int
	}{
		{"version 12", []string{"Sec-WebSocket-Version: 12"}, 426},
		{"foreign origin", []string{"Origin: http://evil.example"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, resp := rawDial(t, url, tc.extra...)
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == 426 && resp.Header.Get("Sec-WebSocket-Version") != "13" {
				t.Errorf("426 without Sec-WebSocket-Version: 13")
			}
		})
	}
	_, resp := rawDial(t, url, "Origin: http://"+strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws"))
	if resp.StatusCode != 101 {
		t.Errorf("same origin: status %d, want 101", resp.StatusCode)
	}
}

// TestHalfCloseWithUpgrade: a client that half-closes right after its
// upgrade request (before the switch to WebSocket) must still see its
// connection end, and OnClose run; the end of its stream once went to the
// HTTP server, and the upgraded connection waited forever.
func TestHalfCloseWithUpgrade(t *testing.T) {
	srv := newRecorder(true)
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, false)
	for range 20 {
		host := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws")
		nc, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(nc, "GET /ws HTTP/1.1\r\nHost: "+host+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
			"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
		nc.(*net.TCPConn).CloseWrite()
		nc.SetReadDeadline(time.Now().Add(testTimeout))
		if _, err := io.Copy(io.Discard, nc); err != nil {
			t.Fatalf("the upgraded connection did not end: %v", err)
		}
		nc.Close()
		srv.expect(t, "open")
		srv.expect(t, "close")
	}
}
