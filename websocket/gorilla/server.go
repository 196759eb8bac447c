package gorilla

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/websocket"
)

// HandshakeError describes an error with the handshake from the peer.
type HandshakeError struct {
	message string
}

func (e HandshakeError) Error() string { return e.message }

// BufferPool is gorilla's pool of write buffers. Upgrader and Dialer
// accept one and ignore it: gale's writes queue on the loop, which pools
// its own buffers.
type BufferPool interface {
	Get() any
	Put(any)
}

// Upgrader upgrades HTTP requests to WebSocket connections served on
// gale's loops: on a net/http server, by hijacking the connection and
// adopting it onto the loops of Engine; on gale's httpd.Server, where it
// is already on one. Its fields are gorilla's, and must not change after
// the first Upgrade.
type Upgrader struct {
	// HandshakeTimeout is accepted and ignored: the 101 response is
	// queued on the loop, never waited for.
	HandshakeTimeout time.Duration

	// ReadBufferSize is accepted and ignored (a connection's unread
	// input is bounded by its inbox, 64 KiB). WriteBufferSize is the size
	// of NextWriter's frames; 4096 by default.
	ReadBufferSize, WriteBufferSize int

	// WriteBufferPool is accepted and ignored.
	WriteBufferPool BufferPool

	// Subprotocols are the server's, in order of preference: the first
	// the client offers too is agreed on. If nil, the response header's
	// Sec-WebSocket-Protocol, if any, is the one agreed on.
	Subprotocols []string

	// Error writes the response to a request that is not a valid
	// upgrade; nil: http.Error with the status's text.
	Error func(w http.ResponseWriter, r *http.Request, status int, reason error)

	// CheckOrigin decides whether a request's Origin is allowed; nil
	// allows a request without one and one whose Origin's host is its
	// Host, as gorilla's does.
	CheckOrigin func(r *http.Request) bool

	// EnableCompression negotiates permessage-deflate, without context
	// takeover, as gorilla does.
	EnableCompression bool

	// Engine runs the connections taken over from a net/http server (not
	// gorilla's: gale's). Nil: websocket.Options' default, one engine for
	// the program.
	Engine *engine.Engine
}

// upgraders are gale's Upgraders, one per setting: an Upgrader holds no
// state of its own, so that it may be copied as gorilla's may.
var upgraders sync.Map // upgraderKey -> *websocket.Upgrader

type upgraderKey struct {
	compress bool
	e        *engine.Engine
}

func (u *Upgrader) gale() *websocket.Upgrader {
	k := upgraderKey{u.EnableCompression, u.Engine}
	if up, ok := upgraders.Load(k); ok {
		return up.(*websocket.Upgrader)
	}
	o := options(u.EnableCompression)
	o.Engine = u.Engine
	up, _ := upgraders.LoadOrStore(k, &websocket.Upgrader{Options: o, CheckOrigin: allowAll})
	return up.(*websocket.Upgrader)
}

func (u *Upgrader) returnError(w http.ResponseWriter, r *http.Request, status int, reason string) (*Conn, error) {
	err := HandshakeError{reason}
	if u.Error != nil {
		u.Error(w, r, status, err)
	} else {
		w.Header().Set("Sec-Websocket-Version", "13")
		http.Error(w, http.StatusText(status), status)
	}
	return nil, err
}

// Upgrade upgrades r to a WebSocket connection, adding responseHeader to
// the 101 response (a Set-Cookie, a Sec-WebSocket-Protocol when
// Subprotocols is nil). A request that is not a valid upgrade is answered
// with an HTTP error (through u.Error) and returns a HandshakeError; the
// handler must not write to w after Upgrade, whatever it returns.
func (u *Upgrader) Upgrade(w http.ResponseWriter, r *http.Request, responseHeader http.Header) (*Conn, error) {
	if status, why := u.check(r, responseHeader); status != 0 {
		return u.returnError(w, r, status, why)
	}
	sub := u.selectSubprotocol(r, responseHeader)
	h := responseHeader.Clone()
	if h == nil {
		h = make(http.Header)
	}
	h.Del("Sec-Websocket-Protocol")
	if sub != "" {
		h.Set("Sec-Websocket-Protocol", sub)
	}
	c := newConn(true, sub, u.WriteBufferSize)
	ws, err := upgradeAside(u.gale(), w, r, h, c)
	if err != nil {
		return nil, err
	}
	c.setWS(ws)
	c.local, c.remote = ws.LocalAddr(), ws.RemoteAddr()
	return c, nil
}

func allowAll(*http.Request) bool { return true }

// upgradeAside runs up.UpgradeWith on a goroutine of its own, and waits
// for it. The upgrade (the hijack, the adoption onto a loop) takes more
// stack than a handler that then waits in ReadMessage for the
// connection's life: run on the handler's goroutine, it would leave that
// goroutine with a stack twice as large (8 KiB instead of 4, measured:
// the runtime shrinks a stack only while less than a quarter of it is in
// use), for as long as the connection lives.
func upgradeAside(up *websocket.Upgrader, w http.ResponseWriter, r *http.Request, h http.Header, c *Conn) (*websocket.Conn, error) {
	type result struct {
		ws    *websocket.Conn
		err   error
		panic any // the upgrade's, raised again on the handler's goroutine
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{panic: p}
			}
		}()
		ws, err := up.UpgradeWith(w, r, h, c)
		done <- result{ws: ws, err: err}
	}()
	res := <-done
	if res.panic != nil {
		panic(res.panic)
	}
	return res.ws, res.err
}

// check validates r as gorilla does, with its statuses and reasons; 0 if
// r is a valid upgrade.
func (u *Upgrader) check(r *http.Request, responseHeader http.Header) (int, string) {
	const bad = "websocket: the client is not using the websocket protocol: "
	checkOrigin := u.CheckOrigin
	if checkOrigin == nil {
		checkOrigin = checkSameOrigin
	}
	switch {
	case !tokenListContainsValue(r.Header, "Connection", "upgrade"):
		return http.StatusBadRequest, bad + "'upgrade' token not found in 'Connection' header"
	case !tokenListContainsValue(r.Header, "Upgrade", "websocket"):
		return http.StatusBadRequest, bad + "'websocket' token not found in 'Upgrade' header"
	case r.Method != http.MethodGet:
		return http.StatusMethodNotAllowed, bad + "request method is not GET"
	case !tokenListContainsValue(r.Header, "Sec-Websocket-Version", "13"):
		return http.StatusBadRequest, "websocket: unsupported version: 13 not found in 'Sec-Websocket-Version' header"
	case responseHeader["Sec-Websocket-Extensions"] != nil:
		return http.StatusInternalServerError, "websocket: application specific 'Sec-WebSocket-Extensions' headers are unsupported"
	case !checkOrigin(r):
		return http.StatusForbidden, "websocket: request origin not allowed by Upgrader.CheckOrigin"
	case !validChallengeKey(r.Header.Get("Sec-Websocket-Key")):
		return http.StatusBadRequest, "websocket: not a websocket handshake: 'Sec-WebSocket-Key' header must be Base64 encoded value of 16-byte in length"
	}
	return 0, ""
}

func (u *Upgrader) selectSubprotocol(r *http.Request, responseHeader http.Header) string {
	if u.Subprotocols == nil {
		return responseHeader.Get("Sec-Websocket-Protocol")
	}
	offered := Subprotocols(r)
	for _, s := range u.Subprotocols {
		for _, o := range offered {
			if o == s {
				return o
			}
		}
	}
	return ""
}

// checkSameOrigin allows a request without an Origin, and one whose
// Origin's host is its Host (compared without case).
func checkSameOrigin(r *http.Request) bool {
	origin := r.Header["Origin"]
	if len(origin) == 0 {
		return true
	}
	u, err := url.Parse(origin[0])
	return err == nil && strings.EqualFold(u.Host, r.Host)
}

// validChallengeKey reports whether s is the base64 of 16 bytes.
func validChallengeKey(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && len(b) == 16
}

// tokenListContainsValue reports whether header name's comma-separated
// tokens hold value, compared without case.
func tokenListContainsValue(h http.Header, name, value string) bool {
	for _, v := range h[http.CanonicalHeaderKey(name)] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); strings.EqualFold(t, value) {
				return true
			}
		}
	}
	return false
}

// Upgrade upgrades with an Upgrader that allows any origin and writes no
// error response of its own beyond http.Error's.
//
// Deprecated: Use Upgrader.Upgrade, as gorilla says.
func Upgrade(w http.ResponseWriter, r *http.Request, responseHeader http.Header, readBufSize, writeBufSize int) (*Conn, error) {
	u := Upgrader{ReadBufferSize: readBufSize, WriteBufferSize: writeBufSize}
	u.Error = func(w http.ResponseWriter, r *http.Request, status int, reason error) {
		// As gorilla's: no error response is written here.
	}
	u.CheckOrigin = allowAll
	return u.Upgrade(w, r, responseHeader)
}

// Subprotocols returns the subprotocols r's client offers.
func Subprotocols(r *http.Request) []string {
	h := strings.TrimSpace(r.Header.Get("Sec-Websocket-Protocol"))
	if h == "" {
		return nil
	}
	protocols := strings.Split(h, ",")
	for i := range protocols {
		protocols[i] = strings.TrimSpace(protocols[i])
	}
	return protocols
}

// IsWebSocketUpgrade reports whether r asks for a WebSocket upgrade.
func IsWebSocketUpgrade(r *http.Request) bool {
	return tokenListContainsValue(r.Header, "Connection", "upgrade") &&
		tokenListContainsValue(r.Header, "Upgrade", "websocket")
}
