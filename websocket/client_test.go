package websocket_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// rawServer accepts one connection, reads the handshake request and
// answers with respond(key) (the whole response head), then returns the
// connection for the test to drive.
func rawServer(t *testing.T, respond func(key string) string) (url string, conns <-chan *rawConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan *rawConn, 1)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		r := bufio.NewReader(nc)
		req, err := http.ReadRequest(r)
		if err != nil {
			nc.Close()
			return
		}
		io.WriteString(nc, respond(req.Header.Get("Sec-WebSocket-Key")))
		ch <- &rawConn{t: t, nc: nc, r: r}
	}()
	return "ws://" + ln.Addr().String() + "/", ch
}

// accept is RFC 6455's accept value, computed independently of the
// package (the RFC's example key and answer are checked in TestAcceptKey).
func accept(key string) string { return websocket.AcceptKeyForTest(key) }

func ok101(extra ...string) func(string) string {
	return func(key string) string {
		return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			accept(key) + "\r\n" + strings.Join(append(extra, ""), "\r\n") + "\r\n"
	}
}

// TestDialRefuses checks that the client refuses answers that break
// §4.1's rules, with ErrBadHandshake, and returns the response.
func TestDialRefuses(t *testing.T) {
	for _, tc := range []struct {
		name    string
		respond func(string) string
	}{
		{"status 200", func(string) string { return "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n" }},
		{"wrong accept", func(string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: x\r\n\r\n"
		}},
		{"no upgrade", func(key string) string {
			return "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept(key) + "\r\n\r\n"
		}},
		{"subprotocol not offered", ok101("Sec-WebSocket-Protocol: chat")},
		{"extension not offered", ok101("Sec-WebSocket-Extensions: x-unknown")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := rawServer(t, tc.respond)
			d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: testEngine(t)}}
			c, resp, err := d.Dial(context.Background(), url)
			if !errors.Is(err, websocket.ErrBadHandshake) || c != nil {
				t.Fatalf("Dial = (conn %v), %v; want ErrBadHandshake", c != nil, err)
			}
			if resp == nil {
				t.Error("no response returned with the error")
			}
		})
	}
}

// TestClientRefuses checks the client fails the connection on a masked
// server frame, and that a server's close is answered and then waited
// for: the client does not close the TCP connection first (§7.1.1).
func TestClientRefuses(t *testing.T) {
	url, conns := rawServer(t, ok101())
	cli := newRecorder(false)
	dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
	rc := <-conns
	cli.expect(t, "open")
	rc.frame(0x81, true, []byte("masked"))
	f, err := rc.read()
	if err != nil || f.op() != 8 || !f.masked || string(f.payload[:2]) != "\x03\xea" {
		t.Fatalf("read %v, %v; want a masked close frame with 1002", f, err)
	}
	rc.nc.Close()
	var pe *websocket.ProtocolError
	if ev := cli.expect(t, "close"); !errors.As(ev.err, &pe) || pe.Code != 1002 {
		t.Errorf("OnClose(%v), want a protocol error", ev.err)
	}
}

// TestClientCloseHandshake: the server closes; the client answers with the
// code and waits for the server to end the TCP connection.
func TestClientCloseHandshake(t *testing.T) {
	url, conns := rawServer(t, ok101())
	cli := newRecorder(false)
	c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli}}, url)
	rc := <-conns
	cli.expect(t, "open")
	rc.frame(0x81, false, []byte("hello"))
	cli.expect(t, "msg", "hello")
	rc.frame(0x88, false, closePayload(4000, "app"))
	f, err := rc.read()
	if err != nil || f.op() != 8 || string(f.payload) != "\x0f\xa0" {
		t.Fatalf("read %v, %v; want the close answered with 4000", f, err)
	}
	if err := c.WriteMessage(websocket.TextMessage, []byte("late")); !errors.Is(err, websocket.ErrCloseSent) {
		t.Errorf("WriteMessage after the close = %v, want ErrCloseSent", err)
	}
	rc.nc.Close()
	ev := cli.expect(t, "close")
	if ce, ok := ev.err.(*websocket.CloseError); !ok || ce.Code != 4000 || ce.Reason != "app" {
		t.Errorf("OnClose(%v), want 4000 app", ev.err)
	}
}

// TestSubprotocol checks the server picks its first choice among the
// client's offers, and the client sees it.
func TestSubprotocol(t *testing.T) {
	u := &websocket.Upgrader{Options: websocket.Options{Handler: newRecorder(true)}, Subprotocols: []string{"v2", "v1"}}
	url := serveWS(t, u, false)
	c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false)}, Subprotocols: []string{"v1", "v2"}}, url)
	if c.Subprotocol() != "v2" {
		t.Errorf("Subprotocol() = %q, want v2", c.Subprotocol())
	}
	c.CloseNow()
}

// TestDialTimeout: a server that accepts and never answers holds Dial
// only until HandshakeTimeout.
func TestDialTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			io.Copy(io.Discard, c) // reads the request, answers nothing
			c.Close()
		}
	}()
	d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: testEngine(t)}, HandshakeTimeout: 100 * time.Millisecond}
	start := time.Now()
	_, _, err = d.Dial(context.Background(), "ws://"+ln.Addr().String()+"/")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial = %v, want the handshake timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Dial took %v", d)
	}
}
