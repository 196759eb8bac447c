package engine

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/tlsrec"
)

// ErrHandshakeTimeout closes a TLS connection whose handshake did not end
// within Options.HandshakeTimeout. It matches os.ErrDeadlineExceeded.
var ErrHandshakeTimeout error = &timeoutError{"engine: tls handshake timeout"}

// errTLSDetach refuses Detach on a TLS connection.
var errTLSDetach = fmt.Errorf("engine: detach a TLS connection: %w", errors.ErrUnsupported)

// errTLSDatagram refuses TLS on a UDP socket (that is DTLS).
var errTLSDatagram = errors.New("engine: TLS needs a stream network")

// tlsState is a TLS connection's record layer: a standard tls.Conn over a
// tlsrec.Transport that the loop feeds.
//
// The handshake runs with tls.Conn.Handshake on a goroutine of its own,
// within the engine's bound on handshakes computing at once
// (handshakePool), reading what the loop feeds the Transport.
// Then the loop decrypts: it offers the whole records it received to the
// Transport and calls tls.Conn.Read until the Transport would block.
// Writes encrypt on the writer's goroutine; the Transport hands each
// record to the connection's ordinary output path (writeRaw), which never
// waits.
type tlsState struct {
	tc *tls.Conn
	tr *tlsrec.Transport
	hs *handshake // nil once the handshake is over

	est  atomic.Bool // the handshake succeeded: close_notify may be sent
	dead atomic.Bool // the connection closed: a queued handshake is skipped

	// Loop-owned.
	done  bool   // handshake over: records are read on the loop
	hold  bool   // handshake input full: reading waits for its end
	plain *inbuf // plaintext OnData left unconsumed (inbuf.go)

	wmu sync.Mutex // keeps a Writev's records together
	// alert is the size of the close_notify record closeNotify wrote,
	// guarded by the Conn's mu: output the peer is not owed (see lost).
	alert int
}

// handshake is what a connection needs only until its handshake ends.
type handshake struct {
	client bool
	queued bool          // loop-owned: handed to the pool
	timer  loop.Timer    // Options.HandshakeTimeout
	result chan error    // DialTLS waits on it; nil for accepted conns
	gauge  *atomic.Int64 // LoopStats.Handshakes, once counted (countHandshake)
}

// ListenTLS is Listen for TLS: the engine handshakes with each accepted
// connection, using config, once its ClientHello is whole, on a goroutine
// that lasts as long as the handshake (Options.HandshakeWorkers bounds
// those computing at once, Options.HandshakeTimeout each one's time),
// then runs OnOpen; OnData sees plaintext and Conn.Write encrypts. config
// must not be changed after ListenTLS; set GetConfigForClient to vary it
// per connection. A connection whose handshake fails gets no OnOpen:
// OnClose reports its error.
func (e *Engine) ListenTLS(network, addr string, config *tls.Config) (net.Addr, error) {
	if config == nil {
		return nil, errors.New("engine: ListenTLS: nil tls.Config")
	}
	switch network {
	case "tcp", "tcp4", "tcp6", "unix":
	default:
		return nil, fmt.Errorf("engine: listen %s: %w", network, errTLSDatagram)
	}
	return e.ListenWith(network, addr, ListenConfig{TLS: config})
}

// DialTLS connects to addr and handshakes as a TLS client with config,
// then serves the connection on a loop; it returns once the handshake
// has ended (OnOpen has then run or is running). The handshake runs as
// ListenTLS's do, within Options.HandshakeWorkers and
// Options.HandshakeTimeout: while it waits for a silent server it holds
// its goroutine, not a slot, so it delays no other handshake. A value
// OnOpen needs is given with DialWith (Adoption.Context and ClientTLS).
func (e *Engine) DialTLS(network, addr string, config *tls.Config) (*Conn, error) {
	return e.DialTLSContext(context.Background(), network, addr, config)
}

// DialTLSContext is DialTLS bounded by ctx, which covers the connect and
// the handshake. As with tls.Dial, an empty config.ServerName is taken
// from addr. Renegotiation is refused whatever config says: a TLS 1.2
// server that asks for it ends the connection.
func (e *Engine) DialTLSContext(ctx context.Context, network, addr string, config *tls.Config) (*Conn, error) {
	return e.dialTLS(ctx, network, addr, clientConfig(config, addr), nil)
}

// dialTLS is DialTLSContext with cfg made by clientConfig, and v as the
// connection's Context from the start.
func (e *Engine) dialTLS(ctx context.Context, network, addr string, cfg *tls.Config, v any) (*Conn, error) {
	if e.stopping() {
		return nil, ErrEngineStopped
	}
	result := make(chan error, 1)
	c, err := e.dial(ctx, network, addr, func(c *Conn) {
		c.ctx = v
		c.setTLS(newTLSState(c, cfg, true))
		c.tlsOf().hs.result = result
	})
	if err != nil {
		return nil, err
	}
	select {
	case err = <-result:
	case <-ctx.Done():
		c.Abort()
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// clientConfig is config, cloned, with the server's name and without
// renegotiation.
func clientConfig(config *tls.Config, addr string) *tls.Config {
	var cfg *tls.Config
	if config == nil {
		cfg = &tls.Config{}
	} else {
		cfg = config.Clone()
	}
	if cfg.ServerName == "" && !cfg.InsecureSkipVerify {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg.ServerName = host
	}
	cfg.Renegotiation = tls.RenegotiateNever
	return cfg
}

func newTLSState(c *Conn, cfg *tls.Config, client bool) *tlsState {
	// The Transport needs no addresses: crypto/tls does not ask for them.
	t := &tlsState{tr: tlsrec.New(c.writeRaw, nil, nil)}
	if client {
		t.tc = tls.Client(t.tr, cfg)
	} else {
		t.tc = tls.Server(t.tr, cfg)
	}
	t.hs = &handshake{client: client}
	t.hs.timer.Fire = func(time.Time) { c.handshakeExpired() }
	return t
}

// ConnectionState returns the TLS state of c's connection (version,
// cipher suite, ALPN protocol, server name, peer certificates, session
// resumption), and false if c does not use TLS. It is complete from
// OnOpen on.
func (c *Conn) ConnectionState() (tls.ConnectionState, bool) {
	t := c.tlsOf()
	if t == nil {
		return tls.ConnectionState{}, false
	}
	return t.tc.ConnectionState(), true
}
