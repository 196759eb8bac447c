package httpd

import (
	"context"
	"crypto/tls"
	"errors"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/engine"
)

// Server serves HTTP/1.x with a Handler. Its fields follow net/http.Server
// where it has them, with the same meaning and defaults; the fields after
// Protocols are gale's. A Server must not be copied after first use, and
// its fields must not change once it serves.
type Server struct {
	// Addr is the TCP address ListenAndServe and ListenAndServeTLS listen
	// on; ":http" or ":https" when empty.
	Addr string
	// Handler serves each request; http.DefaultServeMux when nil.
	Handler http.Handler
	// TLSConfig configures ServeTLS and ListenAndServeTLS; it is cloned,
	// and NextProtos defaults to "h2" and "http/1.1", as Protocols
	// allows.
	TLSConfig *tls.Config
	// ReadTimeout bounds the reading of a whole request, body included,
	// from its first byte. 0 means none.
	ReadTimeout time.Duration
	// ReadHeaderTimeout bounds the reading of a request's head; when 0,
	// ReadTimeout is used, and when both are 0 there is none.
	ReadHeaderTimeout time.Duration
	// WriteTimeout bounds the writing of a response, from the end of its
	// request's head. 0 means none.
	WriteTimeout time.Duration
	// IdleTimeout bounds the wait for the next request on a keep-alive
	// connection; when 0, ReadTimeout is used, and when both are 0 there
	// is none.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps a request's head (request line and headers);
	// http.DefaultMaxHeaderBytes (1 MiB) when 0. A longer head is
	// answered 431 and the connection closed.
	MaxHeaderBytes int
	// MaxHeaderValueCount caps the field lines of a request's head (each
	// value is one, the Host field included): a head with more is
	// answered 431 and the connection closed, as by net/http's field of
	// the same name from Go 1.27 on (whatever Go builds this package).
	// DefaultMaxHeaderValueCount when 0.
	MaxHeaderValueCount int
	// ErrorLog receives errors (panics in handlers, refused
	// connections); the log package's standard logger when nil.
	ErrorLog *log.Logger
	// ConnState is called when a connection changes state, as in
	// net/http. For a connection served by a loop it runs on that loop
	// and must not block; the net.Conn it is given identifies the
	// connection (addresses, Close, deadlines), and its Read fails.
	ConnState func(net.Conn, http.ConnState)
	// BaseContext returns the base context of the requests arriving on a
	// listener; context.Background() when nil.
	BaseContext func(net.Listener) context.Context
	// ConnContext derives the context of a new connection's requests.
	ConnContext func(ctx context.Context, c net.Conn) context.Context
	// HTTP2 configures HTTP/2 connections, as net/http's field does:
	// MaxConcurrentStreams, MaxDecoderHeaderTableSize,
	// MaxEncoderHeaderTableSize (0 by default here: responses' fields are
	// not indexed, and an idle connection keeps no encoder table; net/http
	// uses 4 KiB), MaxReadFrameSize (16 KiB by default here),
	// MaxReceiveBufferPerConnection, MaxReceiveBufferPerStream and
	// WriteByteTimeout (DefaultHTTP2StallTimeout when 0); the other
	// fields are a client's. nil is the defaults.
	HTTP2 *http.HTTP2Config
	// Protocols is the set of protocols served, as net/http's field:
	// when nil, HTTP/1 and, over TLS, HTTP/2 (negotiated by ALPN).
	// UnencryptedHTTP2 serves HTTP/2 in the clear (h2c): with prior
	// knowledge, and by "Upgrade: h2c".
	Protocols *http.Protocols

	// Mode chooses loops or net/http's goroutines per connection;
	// ModeLoop by default.
	Mode Mode
	// MixedThreshold is the number of open connections below which
	// ModeMixed serves a new one with a goroutine; DefaultMixedThreshold
	// when 0.
	MixedThreshold int
	// MaxHandlers caps the handlers running at once for loop-served
	// connections. 0, the default, sets no cap, as net/http sets none:
	// every request whose head is whole gets a goroutine at once (one
	// kept from an earlier request, or a new one), so no request waits
	// for another's handler, however long that one waits on its client.
	// With a cap, a request that finds MaxHandlers running is answered
	// 503 Service Unavailable at once and its connection closed (an
	// HTTP/2 stream is refused with REFUSED_STREAM, which a client may
	// retry); it is never queued. A handler that hijacks its connection stops counting
	// at the Hijack.
	MaxHandlers int
	// BodyBufferSize bounds the request body bytes received and not yet
	// read by the handler: once less than a receive's worth of room is
	// left (Engine.ReadBufferSize, or half of this), the loop stops
	// reading the connection until Body.Read makes that room. 128 KiB
	// when 0. The buffer grows with what arrives, from 512 bytes, and
	// is given back whenever the handler has read it empty: a body that
	// trickles in holds about what it sent.
	BodyBufferSize int
	// ExtendedConnect announces RFC 8441's extended CONNECT on HTTP/2
	// connections (SETTINGS_ENABLE_CONNECT_PROTOCOL): a browser then opens
	// a WebSocket as a stream of the HTTP/2 connection it has, which
	// websocket.Upgrader answers (see Tunnel). Off by default, as in
	// net/http (whose GODEBUG=http2xconnect=1 turns it on): a handler that
	// upgrades with a library that knows only HTTP/1.1's Upgrade would
	// refuse such a request. Without it a request with :protocol is
	// malformed.
	ExtendedConnect bool
	// MaxBodyBytes caps every request body (as http.MaxBytesReader
	// would): a Read past it fails with *http.MaxBytesError and the
	// connection closes after the response. 0 means no cap, as in
	// net/http.
	MaxBodyBytes int64
	// ProxyProtocol, if not nil, reads the PROXY protocol header (v1 or
	// v2) that a load balancer it trusts sends at the start of each
	// connection, before the TLS handshake: the request's RemoteAddr is
	// then the client's. On a loop the header is read there, holding no
	// goroutine, within its Timeout; a connection served by net/http's
	// goroutine (ModeMixed) reads it on that goroutine. A trusted peer's
	// connection without a valid header is closed unanswered; see
	// engine.ProxyProtocol.
	ProxyProtocol *engine.ProxyProtocol
	// HandOff, if set, is given each idle keep-alive connection that
	// Shutdown would close, instead of closing it: one in the clear that
	// served an HTTP/1.x request and has begun no other, read from its
	// socket (no PROXY header), with the bytes received and not consumed.
	// The replacing process serves it on (ServeConn; package restart
	// carries it there with SendConn and ReadyWith), and its client never
	// sees the restart. It runs on a goroutine of the server's; an error
	// closes the connection, unlogged (a shutdown with no successor, say).
	// nil closes them, as net/http does.
	HandOff func(nc net.Conn, input []byte) error
	// Engine configures the loops (their number, backend, buffers). Its
	// zero value is the engine's defaults. Its backend.Auto picks epoll
	// on Linux here, not io_uring: handlers run on pooled goroutines, so
	// every request crosses between the loop and a handler goroutine
	// twice, and io_uring's loop holds its OS thread, which makes each
	// crossing a futex wake-up (package backend's table; CHANGELOG.md,
	// "httpd", has the figures). Set backend.IOURing to have it anyway;
	// GALE_BACKEND overrides both. Its ErrorLog is ErrorLog when nil.
	Engine engine.Options

	mu        sync.Mutex
	h2        h2limits // fixed by start
	eng       *engine.Engine
	listeners map[*net.Listener]struct{}
	conns     connList   // the loop-served connections open
	stds      []*stdSide // net/http's servers, one per listener that used one
	onShut    []func()
	streams   map[*Stream]struct{} // the event streams open (EventStream)
	pool      *pool
	shutting  atomic.Bool
	shutAt    atomic.Int64 // when Shutdown began, in Unix nanoseconds
	disableKA atomic.Bool
	open      atomic.Int64 // connections open, on loops and goroutines
	upgrades  atomic.Int64 // upgraded connections open (Upgrade), out of conns
	handOffs  atomic.Int64 // connections being handed off (HandOff), Shutdown waits for
	refused   refusals     // Stats.Refused
	done      chan struct{}
	closeOnce sync.Once
}

// DefaultMaxHeaderValueCount is Server.MaxHeaderValueCount's default:
// net/http's from Go 1.27 on.
const DefaultMaxHeaderValueCount = 500

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown
// or Close: it is net/http's, so existing checks keep working.
var ErrServerClosed = http.ErrServerClosed

// ListenAndServe listens on the TCP address s.Addr and serves it; see
// Serve.
func (s *Server) ListenAndServe() error {
	if s.shutting.Load() {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = ":http"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// ListenAndServeTLS is ListenAndServe with TLS: see ServeTLS.
func (s *Server) ListenAndServeTLS(certFile, keyFile string) error {
	if s.shutting.Load() {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = ":https"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.ServeTLS(ln, certFile, keyFile)
}

// Serve accepts connections on l and serves each, from a loop or (in
// ModeMixed, below the threshold) a goroutine of net/http's, until l
// fails or Shutdown or Close is called; it then returns
// ErrServerClosed, or l's error. l is closed when Serve returns. A
// connection that is no socket (one without a descriptor, as a
// crypto/tls listener's) is served by net/http's goroutine.
func (s *Server) Serve(l net.Listener) error {
	return s.serve(l, nil)
}

// ServeTLS is Serve for TLS: each connection is handshaken with
// TLSConfig and the certificate in certFile and keyFile (which may be
// empty when TLSConfig has certificates). A loop-served connection waits
// for its ClientHello on the loop, then handshakes on a goroutine of its
// own, holding one of the engine's HandshakeWorkers only while it
// computes (see engine.Options): stalled handshakes never keep other
// clients waiting. ALPN negotiates "h2" (HTTP/2) or "http/1.1", as
// Protocols allows.
func (s *Server) ServeTLS(l net.Listener, certFile, keyFile string) error {
	cfg, err := s.tlsConfig(certFile, keyFile)
	if err != nil {
		l.Close()
		return err
	}
	return s.serve(l, cfg)
}

func (s *Server) tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	cfg := &tls.Config{}
	if s.TLSConfig != nil {
		cfg = s.TLSConfig.Clone()
	}
	if len(cfg.NextProtos) == 0 {
		if h1, h2, _ := s.serves(); h2 {
			cfg.NextProtos = append(cfg.NextProtos, "h2")
			if h1 {
				cfg.NextProtos = append(cfg.NextProtos, "http/1.1")
			}
		} else {
			cfg.NextProtos = []string{"http/1.1"}
		}
	}
	if len(cfg.Certificates) == 0 && cfg.GetCertificate == nil || certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = append(cfg.Certificates, cert)
	}
	return cfg, nil
}

// RegisterOnShutdown registers f to be called, on its own goroutine, when
// Shutdown begins: to tell hijacked connections (WebSockets) to go.
func (s *Server) RegisterOnShutdown(f func()) {
	s.mu.Lock()
	s.onShut = append(s.onShut, f)
	s.mu.Unlock()
}

// SetKeepAlivesEnabled turns keep-alive on (the default) or off: off,
// every response closes its connection.
func (s *Server) SetKeepAlivesEnabled(v bool) {
	s.disableKA.Store(!v)
	if !v {
		s.closeIdle()
	}
}

func (s *Server) keepAlives() bool { return !s.disableKA.Load() && !s.shutting.Load() }

// errNoHandlers is the reason a request is refused when MaxHandlers
// handlers run.
var errNoHandlers = errors.New("httpd: MaxHandlers handlers running")
