package websocket_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// TestDialProxy: ws:// and wss:// through a CONNECT proxy, with and
// without credentials, the TLS of wss:// with the server inside the
// tunnel.
func TestDialProxy(t *testing.T) { backendtest.Run(t, testDialProxy) }

func testDialProxy(t *testing.T) {
	for _, tc := range []struct {
		name       string
		secure     bool
		user, pass string
	}{
		{"ws", false, "", ""},
		{"wss", true, "", ""},
		{"ws/auth", false, "alice", "s3cret:x"},
		{"wss/auth", true, "alice", "s3cret:x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRecorder(true)
			target := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: srv}}, tc.secure)
			p, pu, stop := serveProxy(tc.user, tc.pass)
			t.Cleanup(stop)
			if tc.user != "" {
				pu.User = url.UserPassword(tc.user, tc.pass)
			}
			cli := newRecorder(false)
			d := &websocket.Dialer{Options: websocket.Options{Handler: cli}, Proxy: http.ProxyURL(pu)}
			c := dial(t, d, target)
			cli.expect(t, "open")
			c.WriteMessage(websocket.TextMessage, []byte("through the tunnel"))
			cli.expect(t, "msg", "through the tunnel")
			host := strings.Split(strings.SplitN(target, "://", 2)[1], "/")[0]
			if got := p.tunnels(); len(got) != 1 || got[0] != host {
				t.Errorf("proxy tunnels = %q, want [%q]", got, host)
			}
			c.Close(websocket.StatusNormalClosure, "")
			for ev := cli.next(t); ev.kind != "close"; ev = cli.next(t) {
			}
		})
	}
}

// TestDialProxyRefused: a proxy that wants credentials answers 407 to a
// Dialer with none, or wrong ones: Dial fails saying so, and returns the
// proxy's response.
func TestDialProxyRefused(t *testing.T) { backendtest.Run(t, testDialProxyRefused) }

func testDialProxyRefused(t *testing.T) {
	target := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: newRecorder(true)}}, false)
	p, pu, stop := serveProxy("alice", "secret")
	t.Cleanup(stop)
	for _, user := range []*url.Userinfo{nil, url.UserPassword("alice", "wrong")} {
		pu.User = user
		d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: testEngine(t)}, Proxy: http.ProxyURL(pu)}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		c, resp, err := d.Dial(ctx, target)
		cancel()
		if err == nil {
			c.CloseNow()
			t.Fatalf("Dial through a proxy wanting credentials, with %v: no error", user)
		}
		if !strings.Contains(err.Error(), "407 Proxy Authentication Required") {
			t.Errorf("Dial's error %q, want it to name the proxy's 407", err)
		}
		if resp == nil || resp.StatusCode != http.StatusProxyAuthRequired || resp.Request.Method != http.MethodConnect {
			t.Errorf("Dial's response %+v, want the proxy's 407 to the CONNECT", resp)
		}
	}
	if got := p.tunnels(); len(got) != 0 {
		t.Errorf("proxy tunnels = %q, want none", got)
	}
}

// TestDialProxyChoice: Proxy's nil means no proxy, its error fails the
// Dial, and a proxy other than http:// is unsupported.
func TestDialProxyChoice(t *testing.T) {
	target := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: newRecorder(true)}}, false)
	errNo := errors.New("no proxy for you")
	var asked *http.Request
	for _, tc := range []struct {
		name  string
		proxy func(*http.Request) (*url.URL, error)
		want  error
	}{
		{"nil", func(r *http.Request) (*url.URL, error) { asked = r; return nil, nil }, nil},
		{"error", func(*http.Request) (*url.URL, error) { return nil, errNo }, errNo},
		{"socks5", http.ProxyURL(&url.URL{Scheme: "socks5", Host: "127.0.0.1:1"}), errors.ErrUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: testEngine(t)}, Proxy: tc.proxy}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			c, _, err := d.Dial(ctx, target)
			if c != nil {
				c.CloseNow()
			}
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Dial = %v, want %v", err, tc.want)
			}
		})
	}
	if asked == nil || asked.URL.Scheme != "http" || "ws://"+asked.URL.Host+asked.URL.Path != target {
		t.Errorf("Proxy asked for %v, want %s as http://", asked, target)
	}
}

// TestDialProxySilent: a proxy that never answers the CONNECT holds the
// Dial no longer than HandshakeTimeout.
func TestDialProxySilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		nc, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, nc) // until the Dialer gives up
			nc.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	d := &websocket.Dialer{
		Options:          websocket.Options{Handler: newRecorder(false), Engine: testEngine(t)},
		Proxy:            http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()}),
		HandshakeTimeout: 100 * time.Millisecond,
	}
	start := time.Now()
	_, _, err = d.Dial(context.Background(), "ws://127.0.0.1:1/")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial through a silent proxy = %v, want context.DeadlineExceeded", err)
	}
	if took := time.Since(start); took > testTimeout/2 {
		t.Errorf("Dial through a silent proxy took %v, want about 100ms", took)
	}
}

// TestDialProxyHostile: a proxy's answer to CONNECT that is no tunnel
// fails the Dial: one with bytes after its head (the server speaks only
// when spoken to), one whose head never ends within 16 KiB, one that is
// not HTTP.
func TestDialProxyHostile(t *testing.T) {
	for _, tc := range []struct {
		name, answer, want string
	}{
		{"bytes-after", "HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 101 Switching Protocols\r\n\r\n", "bytes after its response"},
		{"huge-head", "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", 20<<10) + "\r\n\r\n", "over 16384 bytes"},
		{"not-http", "SSH-2.0-OpenSSH_9.6\r\n\r\n", "reading its response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(testTimeout))
				if _, err := http.ReadRequest(bufio.NewReader(nc)); err == nil {
					io.WriteString(nc, tc.answer)
					io.Copy(io.Discard, nc) // until the Dialer gives up
				}
			}()
			t.Cleanup(func() { ln.Close(); <-done })
			d := &websocket.Dialer{
				Options: websocket.Options{Handler: newRecorder(false), Engine: testEngine(t)},
				Proxy:   http.ProxyURL(&url.URL{Scheme: "http", Host: ln.Addr().String()}),
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			c, _, err := d.Dial(ctx, "ws://127.0.0.1:1/")
			if c != nil {
				c.CloseNow()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Dial = %v, want an error about %q", err, tc.want)
			}
		})
	}
}
