package gorilla

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// Dialer dials WebSocket servers; the connection is served on gale's
// loops, its handshake done there too. Its fields are gorilla's; it may
// be used by many goroutines at once, and copied.
type Dialer struct {
	// NetDialContext (or, if nil, NetDial) opens the TCP connections, to
	// the server or to the proxy, as gorilla's does. A socket of package
	// net's that it returns is adopted onto a loop; any other net.Conn (a
	// wrapper) costs two goroutines for as long as it lives, which relay
	// it to the loop (websocket.Dialer.NetDialContext).
	// NetDialTLSContext is accepted and ignored: TLS is done on the loop,
	// over NetDialContext's connection, with TLSClientConfig.
	NetDial           func(network, addr string) (net.Conn, error)
	NetDialContext    func(ctx context.Context, network, addr string) (net.Conn, error)
	NetDialTLSContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Proxy returns the proxy of a request, as http.Transport's does:
	// http:// proxies only (CONNECT, Basic credentials); see
	// websocket.Dialer.Proxy.
	Proxy func(*http.Request) (*url.URL, error)

	// TLSClientConfig configures wss:// connections; nil: the zero
	// configuration.
	TLSClientConfig *tls.Config

	// HandshakeTimeout bounds the dial and the handshake; zero: 10 s
	// (gale's default; gorilla's zero is no bound but the context's).
	// A negative one fails every Dial, as gorilla's does.
	HandshakeTimeout time.Duration

	// ReadBufferSize is accepted and ignored (see Upgrader);
	// WriteBufferSize is the size of NextWriter's frames, 4096 by default.
	ReadBufferSize, WriteBufferSize int

	// WriteBufferPool is accepted and ignored.
	WriteBufferPool BufferPool

	// Subprotocols are offered in the handshake, by preference.
	Subprotocols []string

	// EnableCompression offers permessage-deflate without context
	// takeover, as gorilla does.
	EnableCompression bool

	// Jar gives the handshake its cookies and takes the response's.
	Jar http.CookieJar

	// Engine runs the dialed connections (not gorilla's: gale's). Nil:
	// websocket.Options' default, one engine for the program.
	Engine *engine.Engine
}

// DefaultDialer is a dialer with all fields set to their defaults but
// Proxy (http.ProxyFromEnvironment) and HandshakeTimeout (45 s), as
// gorilla's.
var DefaultDialer = &Dialer{
	Proxy:            http.ProxyFromEnvironment,
	HandshakeTimeout: 45 * time.Second,
}

// Dial is DialContext with context.Background().
func (d *Dialer) Dial(urlStr string, requestHeader http.Header) (*Conn, *http.Response, error) {
	return d.DialContext(context.Background(), urlStr, requestHeader)
}

// DialContext opens a WebSocket connection to urlStr (ws:// or wss://),
// with requestHeader added to the handshake (Origin, Cookie, Host in
// place of the URL's, Sec-WebSocket-Protocol when Subprotocols is
// empty...; a header the handshake sets itself is refused). ctx bounds
// the dial and the handshake, not the connection; an
// httptrace.ClientTrace in it is told of the dial and the handshake (see
// websocket.Dialer.DialWith: some of its hooks run on the loop).
// The server's response is returned, also when the handshake fails
// (ErrBadHandshake), with as much of its body as came with its head, up
// to 1 KiB (gorilla reads 1 KiB).
func (d *Dialer) DialContext(ctx context.Context, urlStr string, requestHeader http.Header) (*Conn, *http.Response, error) {
	if d == nil {
		d = &Dialer{}
	}
	u, err := url.Parse(urlStr)
	if err != nil {
		return nil, nil, err
	}
	if (u.Scheme != "ws" && u.Scheme != "wss") || u.User != nil {
		return nil, nil, errMalformedURL
	}
	gd := &websocket.Dialer{
		Options:          options(d.EnableCompression),
		TLSConfig:        d.TLSClientConfig,
		Subprotocols:     d.Subprotocols,
		Header:           make(http.Header),
		HandshakeTimeout: d.HandshakeTimeout,
		Proxy:            d.Proxy,
	}
	gd.Engine = d.Engine
	gd.NetDialContext = d.NetDialContext
	if gd.NetDialContext == nil && d.NetDial != nil {
		gd.NetDialContext = func(_ context.Context, network, addr string) (net.Conn, error) {
			return d.NetDial(network, addr)
		}
	}
	for k, vs := range requestHeader {
		switch k {
		case "Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions":
			return nil, nil, errors.New("websocket: duplicate header not allowed: " + k)
		case "Sec-Websocket-Protocol":
			if len(d.Subprotocols) > 0 {
				return nil, nil, errors.New("websocket: duplicate header not allowed: " + k)
			}
			for _, v := range vs {
				for _, p := range strings.Split(v, ",") {
					gd.Subprotocols = append(gd.Subprotocols, strings.TrimSpace(p))
				}
			}
		default:
			gd.Header[k] = vs
		}
	}
	cookieURL := *u
	cookieURL.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	if d.Jar != nil {
		req := &http.Request{Header: gd.Header}
		for _, ck := range d.Jar.Cookies(&cookieURL) {
			req.AddCookie(ck)
		}
	}
	if d.HandshakeTimeout != 0 { // a negative one fails at once, as gorilla's
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d.HandshakeTimeout)
		defer cancel()
	}
	c := newConn(false, "", d.WriteBufferSize)
	ws, resp, err := gd.DialWith(ctx, urlStr, c)
	if resp != nil && resp.Body == nil {
		resp.Body = http.NoBody
	}
	if d.Jar != nil && resp != nil {
		if rc := resp.Cookies(); len(rc) > 0 {
			d.Jar.SetCookies(&cookieURL, rc)
		}
	}
	if err != nil {
		if errors.Is(err, websocket.ErrBadHandshake) {
			err = ErrBadHandshake
		}
		return nil, resp, err
	}
	c.setWS(ws)
	c.sub = ws.Subprotocol()
	c.local, c.remote = ws.LocalAddr(), ws.RemoteAddr()
	return c, resp, nil
}
