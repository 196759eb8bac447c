package websocket

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/galeio/gale/engine"
)

// Dialer opens client WebSocket connections (RFC 6455 §4.1), served on
// Options.Engine's loops like the server's: ws:// and wss:// (TLS on the
// loop too), with the whole handshake done there.
//
// A Dialer may be used by many goroutines at once; its fields must not
// change after the first Dial.
type Dialer struct {
	Options
	// TLSConfig configures wss:// connections; nil uses the zero
	// configuration (ServerName is set from the URL when empty).
	TLSConfig *tls.Config
	// Subprotocols are offered in the handshake, by preference.
	Subprotocols []string
	// Header is added to the handshake request (Origin, Cookie,
	// Authorization...). A Host in it is the request's Host, in place of
	// the URL's, as http.Request.Host is: the connection still goes to
	// the URL's host, and TLS still verifies its name.
	Header http.Header
	// HandshakeTimeout bounds the dial and the handshake when ctx has no
	// earlier deadline. Default 10 s.
	HandshakeTimeout time.Duration
	// Proxy returns the proxy to dial through for a request, or nil (and
	// no error) for none, as http.Transport's Proxy does:
	// http.ProxyFromEnvironment (HTTP_PROXY for ws://, HTTPS_PROXY for
	// wss://, NO_PROXY) or http.ProxyURL. The request is the handshake's
	// GET, its URL's scheme http for ws:// and https for wss://. Only
	// http:// proxies are supported: the Dialer opens a tunnel to the
	// server with CONNECT, sending Proxy-Authorization (Basic) when the
	// proxy's URL has user information, then does the handshake, and for
	// wss:// TLS with the server, through it. A proxy that refuses (407
	// Proxy Authentication Required, 403...) fails the Dial with an error
	// naming its status, and Dial returns its response, whose Request is
	// the CONNECT (so a caller tells it from the server's). Nil: no proxy.
	Proxy func(*http.Request) (*url.URL, error)
	// NetDialContext, if set, opens the TCP connections (to the server,
	// or to the proxy) in place of a net.Dialer's DialContext. A socket
	// of package net's that it returns (a *net.TCPConn, a syscall.Conn)
	// is adopted onto a loop; any other net.Conn (a wrapper) is relayed
	// to the loop through a socket pair by two goroutines, for as long as
	// the connection lives, as a TLS connection net/http terminated is
	// (see Upgrader). TLS for wss:// is done on the loop, over it.
	NetDialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	once sync.Once
	cfg  *config
}

// maxResponseHead caps the server's handshake response.
const maxResponseHead = 16 << 10

// maxRefusalBody caps the body of a refusal that Dial returns.
const maxRefusalBody = 1 << 10

// defaultHandshakeTimeout is Dialer.HandshakeTimeout's default.
const defaultHandshakeTimeout = 10 * time.Second

// Dial opens a WebSocket connection to url (ws:// or wss://), served by
// d.Handler. The server's response is returned too, with its header,
// also when the handshake fails (then with as much of its body as came
// with the head, up to 1 KiB; otherwise empty): a status other than
// 101, a response that breaks §4.1's rules, or a response head over 16
// KiB returns an error wrapping ErrBadHandshake. When ctx (or
// HandshakeTimeout) ends first, Dial closes the connection and returns
// ctx's error; if the handshake ended at that very moment, OnOpen and
// OnClose may have run.
//
// The connection's callbacks begin as soon as the handshake ends: OnOpen
// may run before Dial returns, and so may OnMessage when the server
// speaks first. A value they need is given to DialWith, not set with
// SetContext once Dial returned.
func (d *Dialer) Dial(ctx context.Context, rawURL string) (*Conn, *http.Response, error) {
	return d.DialWith(ctx, rawURL, nil)
}

// DialWith is Dial for a connection whose value (Conn.Context) is v from
// the start, so that OnOpen and every callback after it find it.
//
// An httptrace.ClientTrace in ctx hears of GetConn, the net.Dialer's
// events (DNS, ConnectStart, ConnectDone) and GotConn on the caller's
// goroutine, then WroteHeaders, WroteRequest and GotFirstResponseByte,
// which run on the connection's loop and so must not block.
func (d *Dialer) DialWith(ctx context.Context, rawURL string, v any) (*Conn, *http.Response, error) {
	d.config()
	u, addr, secure, err := parseURL(rawURL)
	if err != nil {
		return nil, nil, err
	}
	timeout := d.HandshakeTimeout
	if timeout <= 0 {
		timeout = defaultHandshakeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e, err := d.engineFor()
	if err != nil {
		return nil, nil, err
	}
	hs := d.newHandshake(u)
	hs.trace = httptrace.ContextClientTrace(ctx)
	c := newConn(d.cfg, client, v)
	c.rare.Store(&connRare{hs: hs})
	if hs.trace != nil && hs.trace.GetConn != nil {
		hs.trace.GetConn(addr)
	}
	nc, resp, err := d.dialTCP(ctx, u, addr, secure)
	if err != nil {
		return nil, resp, err
	}
	if hs.trace != nil && hs.trace.GotConn != nil {
		hs.trace.GotConn(httptrace.GotConnInfo{Conn: nc})
	}
	if _, ok := nc.(syscall.Conn); !ok {
		// NetDialContext's, and no socket (a wrapper): relayed.
		if nc, err = relay(nc, nil); err != nil {
			return nil, nil, err
		}
	}
	a := engine.Adoption{Context: (*protocol)(c)}
	if secure {
		a.ClientTLS = d.tlsConfig(u)
	}
	ec, err := e.AdoptWith(nc, a)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	c.ecp.Store(ec)
	select {
	case <-hs.done:
	case <-ctx.Done():
		ec.Abort() // (if the handshake ended meanwhile, the connection goes too)
		<-hs.done
		return nil, hs.resp, fmt.Errorf("websocket: handshake: %w", ctx.Err())
	}
	if hs.err != nil {
		return nil, hs.resp, hs.err
	}
	return c, hs.resp, nil
}

// Dial dials url with a Dialer whose Handler is h and whose other fields
// are their defaults.
func Dial(ctx context.Context, url string, h Handler) (*Conn, *http.Response, error) {
	d := Dialer{Options: Options{Handler: h}}
	return d.Dial(ctx, url)
}

// parseURL checks a ws:// or wss:// URL and returns its host:port.
func parseURL(rawURL string) (u *url.URL, addr string, secure bool, err error) {
	u, err = url.Parse(rawURL)
	if err != nil {
		return nil, "", false, err
	}
	port := "80"
	switch u.Scheme {
	case "ws", "http":
	case "wss", "https":
		secure, port = true, "443"
	default:
		return nil, "", false, fmt.Errorf("websocket: URL scheme %q is not ws or wss", u.Scheme)
	}
	if u.User != nil || u.Fragment != "" {
		return nil, "", false, fmt.Errorf("websocket: URL %q has user info or a fragment", rawURL)
	}
	if u.Port() != "" {
		port = u.Port()
	}
	return u, net.JoinHostPort(u.Hostname(), port), secure, nil
}

func (d *Dialer) tlsConfig(u *url.URL) *tls.Config {
	cfg := &tls.Config{}
	if d.TLSConfig != nil {
		cfg = d.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{"http/1.1"}
	}
	return cfg
}

// handshake is a client connection's state until the server's 101 came:
// the request to send, then the response being read, on the loop.
type handshake struct {
	req      []byte
	key      string
	sub      []string
	searched int // the response's bytes searched for its end, less the 3 that could begin it
	done     chan struct{}
	trace    *httptrace.ClientTrace // DialWith's context's; nil if none
	answered bool                   // the response's first bytes came
	resp     *http.Response
	err      error
}

func (d *Dialer) newHandshake(u *url.URL) *handshake {
	var kb [16]byte
	rand.Read(kb[:])
	hs := &handshake{key: base64.StdEncoding.EncodeToString(kb[:]), sub: d.Subprotocols, done: make(chan struct{})}
	var b bytes.Buffer
	host := u.Host
	if h := d.Header.Get("Host"); h != "" {
		host = h // the Header's Host names the server, as http.Request.Host does
	}
	fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), host)
	b.WriteString("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n")
	fmt.Fprintf(&b, "Sec-WebSocket-Key: %s\r\n", hs.key)
	if len(d.Subprotocols) > 0 {
		fmt.Fprintf(&b, "Sec-WebSocket-Protocol: %s\r\n", strings.Join(d.Subprotocols, ", "))
	}
	if offer := clientOffer(d.cfg.Compression); offer != "" {
		fmt.Fprintf(&b, "Sec-WebSocket-Extensions: %s\r\n", offer)
	}
	d.Header.WriteSubset(&b, map[string]bool{"Host": true})
	b.WriteString("\r\n")
	hs.req = b.Bytes()
	return hs
}

// begin sends the request, once the connection (and TLS) is up.
func (hs *handshake) begin(c *Conn) {
	_, err := c.ec().Write(hs.req)
	if err != nil {
		c.setCloseErr(err)
		c.ec().Abort()
	}
	hs.req = nil
	if t := hs.trace; t != nil {
		if t.WroteHeaders != nil {
			t.WroteHeaders()
		}
		if t.WroteRequest != nil {
			t.WroteRequest(httptrace.WroteRequestInfo{Err: err})
		}
	}
}

// onData reads the response; once it is whole and valid, the connection
// is a WebSocket, and what follows it is frames. A head longer than
// maxResponseHead fails, whether its end came or not; each call searches
// only the bytes not searched before, so a head that trickles costs its
// length once.
func (hs *handshake) onData(c *Conn, in *engine.Inbound) engine.Action {
	if t := hs.trace; t != nil && !hs.answered {
		hs.answered = true
		if t.GotFirstResponseByte != nil {
			t.GotFirstResponseByte()
		}
	}
	b := in.Bytes()
	end := bytes.Index(b[hs.searched:], []byte("\r\n\r\n"))
	if end < 0 {
		hs.searched = max(len(b)-3, 0)
	} else {
		end += hs.searched + 4
	}
	if end > maxResponseHead || end < 0 && len(b) > maxResponseHead {
		hs.err = fmt.Errorf("%w: response head over %d bytes", ErrBadHandshake, maxResponseHead)
		return engine.Close
	}
	if end < 0 {
		return engine.None
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b[:end])), nil)
	if err == nil && resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body = refusalBody(b[:min(len(b), end+maxRefusalBody)])
	}
	in.Discard(end)
	if err == nil {
		hs.resp = resp
		err = hs.verify(c, resp)
	}
	if err != nil {
		hs.err = err
		return engine.Close
	}
	c.rare.Load().hs = nil
	close(hs.done)
	c.open()
	c.startKeepalive()
	if in.Len() > 0 {
		return c.onData(in)
	}
	return engine.None
}

// refusalBody returns the body of a refusal (a status other than 101)
// whose head and first bytes are b: as much of it as came with the head,
// 1 KiB at most (as gorilla's Dial reads), decoded as its header says; it
// often says why.
func refusalBody(b []byte) io.ReadCloser {
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), nil)
	if err != nil {
		return http.NoBody
	}
	body, _ := io.ReadAll(resp.Body) // what came: a body cut short is kept
	return io.NopCloser(bytes.NewReader(body))
}

// verify checks the server's response (§4.1, the client's checks).
func (hs *handshake) verify(c *Conn, resp *http.Response) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s", ErrBadHandshake, why) }
	switch {
	case resp.StatusCode != http.StatusSwitchingProtocols:
		return bad("status " + resp.Status)
	case !hasToken(resp.Header, "Upgrade", "websocket"):
		return bad("no 'websocket' in Upgrade")
	case !hasToken(resp.Header, "Connection", "upgrade"):
		return bad("no 'upgrade' in Connection")
	case resp.Header.Get(hdrAccept) != acceptKey(hs.key):
		return bad("wrong Sec-WebSocket-Accept")
	}
	if sub := resp.Header.Get(hdrProtocol); sub != "" {
		if !containsString(hs.sub, sub) {
			return bad("subprotocol " + sub + " was not offered")
		}
		c.rare.Load().sub = sub
	}
	st, err := acceptResponse(resp.Header.Values(hdrExtensions), c.cfg.Compression)
	if err != nil {
		return err
	}
	if st.on {
		pmd := st                // made here, not for every handshake as &st would be
		c.rare.Load().pmd = &pmd // a client's Conn has its rare part (its handshake)
	}
	return nil
}

// fail ends a handshake that did not complete.
func (hs *handshake) fail(err error) {
	if hs.err == nil {
		hs.err = fmt.Errorf("websocket: handshake: %w", err)
	}
	close(hs.done)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
