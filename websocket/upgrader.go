package websocket

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
)

// Upgrader upgrades HTTP requests to WebSocket connections (RFC 6455 §4.2),
// on gale's HTTP server (httpd.Server) or on net/http's.
//
// On httpd.Server the connection stays on its loop: frames are read and
// written there, and no goroutine is left behind. On a net/http server,
// Upgrade hijacks the connection and adopts it onto Options.Engine's
// loops, so that it too costs no goroutine from then on. A TLS connection
// that net/http terminated cannot leave crypto/tls's tls.Conn, which holds
// its record state: it is relayed to the loop through a socket pair by two
// goroutines (serve TLS with httpd.Server to avoid that cost).
//
// An Upgrader may be used by many goroutines at once; its fields must not
// change after the first Upgrade.
type Upgrader struct {
	Options
	// Subprotocols are the subprotocols the server speaks, by preference:
	// the first that the client offers too is agreed on. None by default.
	Subprotocols []string
	// CheckOrigin decides whether a request's Origin is allowed. nil
	// allows requests with no Origin header and those whose Origin's host
	// is the request's Host (a browser on another site cannot connect).
	CheckOrigin func(r *http.Request) bool

	once sync.Once
	cfg  *config
}

// Upgrade answers r with 101 Switching Protocols and makes its connection
// a WebSocket served by u.Handler. header is added to the response
// (Set-Cookie, say); it may be nil.
//
// The connection's callbacks wait for the handler: OnOpen, which runs
// before any other callback, comes once the handler has called the
// Conn's SetContext or has returned, whichever is first, and what the
// client sends meanwhile waits for it. So gorilla's and nbio's habit is
// safe:
//
//	c, err := u.Upgrade(w, r, nil)
//	if err != nil {
//		return // Upgrade answered the request
//	}
//	c.SetContext(session) // OnOpen, and every callback after it, finds it
//
// and so is keeping the Conn in a table before the handler returns
// (without SetContext): OnClose cannot come first. A handler that goes
// on after Upgrade (one that waits for the connection's end) calls
// SetContext, with nil if it has no value, or uses UpgradeWith: until
// then the connection reads nothing. If the connection ends while its
// callbacks wait (the handler's CloseNow, the engine stopping), OnOpen
// and OnClose run when they would have begun, on a goroutine of their
// own.
//
// httpd.Server tells when the handler returns. On a net/http server its
// request's context does, which net/http cancels then: there r must be
// the handler's request, or carry a context derived from its; one whose
// context is never canceled (context.WithoutCancel's) gives no such
// signal, and its connection's callbacks do not wait.
//
// A request that is not a valid upgrade is answered with an HTTP error
// (400; 403 for a refused origin; 426 for a version other than 13) and
// Upgrade returns an error that wraps ErrBadHandshake. On a net/http
// server, one whose context is done by the time Upgrade hijacks the
// connection (net/http saw the client's end: a client that ended its
// stream right after its request) fails with an error matching
// net.ErrClosed, with no callback. The handler must not write to w after
// Upgrade, whatever it returns.
func (u *Upgrader) Upgrade(w http.ResponseWriter, r *http.Request, header http.Header) (*Conn, error) {
	return u.upgrade(w, r, header, nil, true)
}

// UpgradeWith is Upgrade for a connection whose value (Conn.Context) is v
// from the start: its callbacks need not wait for the handler, and
// begin at once, maybe before UpgradeWith returns. Use it when the value
// is known before the upgrade, and in a handler that goes on after it.
func (u *Upgrader) UpgradeWith(w http.ResponseWriter, r *http.Request, header http.Header, v any) (*Conn, error) {
	return u.upgrade(w, r, header, v, false)
}

// upgrade is Upgrade, with v as the connection's value, and its callbacks
// held for the handler if hold is set.
func (u *Upgrader) upgrade(w http.ResponseWriter, r *http.Request, header http.Header, v any, hold bool) (*Conn, error) {
	u.init()
	if status, why := u.check(r); status != 0 {
		if status == http.StatusUpgradeRequired {
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		http.Error(w, http.StatusText(status)+": "+why, status)
		return nil, fmt.Errorf("%w: %s", ErrBadHandshake, why)
	}
	c := newConn(u.cfg, server, v)
	h := w.Header()
	for k, vs := range header {
		h[k] = append(h[k], vs...)
	}
	overH2 := isH2WebSocket(r)
	u.answer(c, h, r, overH2)
	if hold {
		c.holdFor(w, r)
	}
	u.cfg.live.track(c) // before any callback: OnClose untracks it
	if err := u.switchTo(c, w, r, overH2, hold); err != nil {
		u.cfg.live.untrack(c) // no callback came, nor will
		return nil, err
	}
	u.cfg.live.arrived(c)
	return c, nil
}

// answer fills h, the header of the response to r, a valid upgrade, and
// sets what c agreed on: its subprotocol and compression. overH2 says r
// is an HTTP/2 extended CONNECT, which has no key to accept. Beside what
// the agreements need, it allocates the Sec-WebSocket-Accept value and
// its slice (TestAnswerAllocs).
func (u *Upgrader) answer(c *Conn, h http.Header, r *http.Request, overH2 bool) {
	if !overH2 {
		h["Upgrade"] = upgradeValue
		h["Connection"] = connectionValue
		h[hdrAccept] = []string{acceptKey(r.Header.Get(hdrKey))}
	}
	// c is not shared yet: its rare part is made without wmu.
	if sub := u.pick(r); sub != "" {
		c.rareLocked().sub = sub
		h.Set(hdrProtocol, sub)
	}
	if st, resp, ok := negotiateServer(r.Header.Values(hdrExtensions), u.cfg.Compression); ok {
		pmd := st // made here, not for every upgrade as &st would be
		c.rareLocked().pmd = &pmd
		h.Set(hdrExtensions, resp)
	}
}

// switchTo hands the connection to c: on its loop, through an HTTP/2
// tunnel, or hijacked from net/http. c.ec() is set once it returns nil.
func (u *Upgrader) switchTo(c *Conn, w http.ResponseWriter, r *http.Request, overH2, hold bool) error {
	if overH2 {
		return u.tunnel(c, w)
	}
	ec, err := httpd.Upgrade(w, (*protocol)(c))
	switch {
	case err == nil:
		c.ecp.Store(ec)
		return nil
	case !errors.Is(err, httpd.ErrNotLoop):
		return err
	}
	return u.adopt(c, w, r, hold)
}

// check validates an upgrade request (§4.2.1); it returns the HTTP status
// to refuse it with, or 0.
func (u *Upgrader) check(r *http.Request) (int, string) {
	switch {
	case isH2WebSocket(r):
		if r.Header.Get(hdrVersion) != "13" {
			return http.StatusUpgradeRequired, "Sec-WebSocket-Version is not 13"
		}
	case r.Method != http.MethodGet:
		return http.StatusMethodNotAllowed, "not GET"
	case !r.ProtoAtLeast(1, 1):
		return http.StatusBadRequest, "not HTTP/1.1"
	case !hasToken(r.Header, "Connection", "upgrade"):
		return http.StatusBadRequest, "no 'upgrade' in Connection"
	case !hasToken(r.Header, "Upgrade", "websocket"):
		return http.StatusBadRequest, "no 'websocket' in Upgrade"
	case r.Header.Get(hdrVersion) != "13":
		return http.StatusUpgradeRequired, "Sec-WebSocket-Version is not 13"
	case !validKey(r.Header.Get(hdrKey)):
		return http.StatusBadRequest, "bad Sec-WebSocket-Key"
	}
	check := u.CheckOrigin
	if check == nil {
		check = sameOrigin
	}
	if !check(r) {
		return http.StatusForbidden, "origin not allowed"
	}
	return 0, ""
}

// pick returns the subprotocol agreed on: the first of u's that r offers.
func (u *Upgrader) pick(r *http.Request) string {
	if len(u.Subprotocols) == 0 {
		return ""
	}
	offered := tokens(r.Header, hdrProtocol)
	for _, p := range u.Subprotocols {
		if slices.Contains(offered, p) {
			return p
		}
	}
	return ""
}

// adopt takes c's connection over from a net/http server: it hijacks it,
// writes the 101 response, and moves it onto the engine's loops. hold
// says whether c's callbacks wait for the handler's return.
func (u *Upgrader) adopt(c *Conn, w http.ResponseWriter, r *http.Request, hold bool) error {
	e, err := u.engineFor()
	if err != nil {
		return err
	}
	nc, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return err
	}
	// Until the Hijack, net/http cancels the request's context when it
	// sees the client's end; from now on only the handler's return does,
	// which the callbacks wait for (see holdFor). A context done already
	// cannot tell it: the client went, and the upgrade fails.
	if err := r.Context().Err(); hold && err != nil {
		nc.Close()
		return fmt.Errorf("websocket: the request's context is done (%v): %w", err, net.ErrClosed)
	}
	if err := writeHead(rw.Writer, w.Header()); err != nil {
		nc.Close()
		return err
	}
	input, _ := rw.Reader.Peek(rw.Reader.Buffered())
	if tc, ok := nc.(*tls.Conn); ok {
		nc, err = relay(tc, input)
		input = nil
		if err != nil {
			return err
		}
	}
	ec, err := e.AdoptWith(nc, engine.Adoption{Input: input, Context: (*protocol)(c)})
	if err != nil {
		nc.Close()
		return err
	}
	c.ecp.Store(ec)
	return nil
}

// writeHead writes the 101 response with h through bw, and flushes it.
func writeHead(bw *bufio.Writer, h http.Header) error {
	bw.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	h.Write(bw)
	bw.WriteString("\r\n")
	return bw.Flush()
}
