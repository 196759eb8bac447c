package engine

import (
	"fmt"
	"log"
	"runtime"
	"time"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/internal/loop"
)

// Balance chooses the loop of each accepted connection when one acceptor
// serves a listener (Options.ReusePort false).
type Balance int

const (
	// RoundRobin gives connections to the loops in turn.
	RoundRobin Balance = iota
	// LeastConns gives each connection to the loop serving the fewest.
	LeastConns
	// SourceHash gives connections from one source address to one loop.
	SourceHash
)

// Options configures an Engine. The zero value gives the defaults, listed
// with each field.
type Options struct {
	// Loops is the number of event loops. Default runtime.GOMAXPROCS(0).
	Loops int
	// ReusePort opens one listener per loop with SO_REUSEPORT and lets the
	// kernel spread connections (TCP and UDP on Linux and FreeBSD). When
	// false, loop 0 accepts and Balance picks each connection's loop.
	ReusePort bool
	// Balance picks loops when ReusePort is false. Default RoundRobin.
	Balance Balance
	// ReadBufferSize is the size of each loop's read buffer, shared by its
	// connections. Default 64 KiB.
	ReadBufferSize int
	// MaxInputBuffer caps the input a connection holds unconsumed: when
	// OnData leaves more than this many bytes in its Inbound (a frame
	// that never ends, a line with no newline), the input is dropped and
	// the connection closes gracefully with ErrInputBufferFull, after the
	// replies already queued and what a LimitHandler's OnLimit writes to
	// say why; Stats counts it. Default 4 MiB: a protocol whose frames may
	// be larger sets it above its own frame limit, so that its own error
	// answers first. (gnet, netpoll and evio set no such cap: a peer that
	// never ends a frame grows their input without bound; net/http caps a
	// head at 1 MiB + 4 KiB.)
	MaxInputBuffer int
	// WriteHighWater: once a connection has more bytes queued for output,
	// its loop stops reading from it, so a peer that does not read what it
	// is sent can make the engine hold this much, and the output of one
	// read, and no more. Default 64 KiB (Netty's default too), or
	// MaxWriteBuffer / 2 when that is smaller.
	WriteHighWater int
	// WriteLowWater: reading resumes once the queue is at most this long.
	// Default WriteHighWater / 4.
	WriteLowWater int
	// MaxWriteBuffer caps a connection's backlog: a Write made while at
	// least this many bytes are queued and unsent fails with
	// ErrWriteBufferFull, and the connection closes. It caps the backlog,
	// not a Write: one Write is never refused for its own size (a 20 MiB
	// reply to a reader that keeps up goes out whole), so the queue can
	// pass MaxWriteBuffer by at most the last Write. Default 16 MiB, or
	// WriteHighWater when that is larger.
	MaxWriteBuffer int
	// OutputBudget caps the output queued across the whole engine: above
	// it, every connection with queued output stops reading until that
	// output is sent, and every connection whose callbacks queued output
	// on other connections (a fan-out source is held back, not only its
	// sinks) until the total is below the budget again. Output written
	// outside callbacks (OnTick, other goroutines) has no connection to
	// hold back; MaxWriteBuffer bounds it. Clients that never read hold
	// the total up until MaxWriteBuffer, a write deadline or an idle
	// timeout cuts them. 0 means no budget.
	OutputBudget int64
	// MaxConns caps the connections open at once that the engine's
	// listeners accepted or Adopt gave it (dialed ones are the program's
	// own, and not counted against it). One more is refused as it
	// arrives: reset at once, with no OnOpen, and OnClose reports
	// ErrTooManyConns; LoopStats.Refused counts it. 0 means no cap, as in
	// net/http: the process's descriptor limit is then the bound.
	MaxConns int
	// MaxConnsPerIP caps such connections from one peer address (the
	// client's, for a connection with a PROXY header): one more is
	// refused as MaxConns refuses, so that one client cannot take the
	// engine's MaxConns. IPv6 addresses count one by one. 0 means no
	// cap.
	MaxConnsPerIP int
	// IdleTimeout closes a connection that has neither read nor written
	// for this long. 0 means none.
	IdleTimeout time.Duration
	// ReadIdleTimeout closes a connection that has received nothing for
	// this long, whatever it was sent (a client that only listens to
	// broadcasts is idle for it, not for IdleTimeout). 0 means none.
	//
	// When either passes, OnDeadline runs with ErrIdleTimeout, so that
	// the handler can say goodbye, and the connection then closes after
	// its queued output, with ErrIdleTimeout; it is cut at once if that
	// output made no progress for as long.
	ReadIdleTimeout time.Duration
	// ShutdownTimeout bounds the graceful shutdown that a callback asks
	// for with the Shutdown action (from OnBoot, OnTick, OnData...):
	// connections still open after it are closed at once, so a peer that
	// stops reading cannot keep the engine alive. Engine.Shutdown takes
	// its bound from its context instead. Default 10 s; negative means no
	// bound.
	ShutdownTimeout time.Duration
	// CloseLinger bounds how long a gracefully closing TCP or Unix
	// stream (Conn.Close, the Close action, an idle timeout, the peer's
	// end, Shutdown) waits for its peer's end once its output is written
	// and its sending side shut down. Meanwhile it reads and drops what
	// the peer still sends, up to 256 KiB (it then stops reading, and the
	// time bound alone remains): closed with input unread, a socket is
	// reset, and the reset discards the output the peer has not read yet
	// (net/http's closeWriteAndWait waits as long, rstAvoidanceDelay).
	// A peer that reads the end of the stream and closes ends the wait at
	// once. Default 500 ms; negative closes once the output is written,
	// without shutting down or waiting.
	CloseLinger time.Duration
	// CloseOnDeadline closes a connection at once when a read or write
	// deadline passes, after OnDeadline, dropping its queued output (what
	// OnDeadline wrote too). By default the handler decides, and its Close
	// action closes after the queued output.
	CloseOnDeadline bool
	// TCPKeepAlive sets the keep-alive period of TCP connections: the
	// kernel probes a connection silent for that long, then at that
	// interval, and ends it after the system's count of unanswered
	// probes (9 on Linux), so a peer that vanished without a word does
	// not hold its connection for ever. 0 gives accepted connections
	// package net's 15 s, as net/http's have, and leaves dialed and
	// adopted connections as they came (package net dials with 15 s);
	// negative disables it.
	TCPKeepAlive time.Duration
	// Backend selects the kernel interface: backend.Auto (the default)
	// is io_uring on Linux where it opens, else epoll; kqueue on the BSDs
	// and macOS (package backend).
	Backend backend.Kind
	// HandshakeWorkers bounds the TLS handshakes (ListenTLS, DialTLS)
	// that compute at once: the CPU they take, not how many wait. A
	// server's handshake starts once its ClientHello is whole (until then
	// the loop holds the bytes, and no goroutine); it then runs on a
	// goroutine of its own, which ends with it, and holds one of these
	// slots only while it computes: while it waits for its peer it holds
	// the goroutine alone, as net/http's handshake does, so a silent peer
	// delays no other handshake. Handshakes beyond the bound wait for a
	// slot, those under way first. A tls.Config callback that blocks
	// (GetCertificate fetching from the network) keeps its slot. Default
	// 4 * runtime.GOMAXPROCS(0), at least 16.
	HandshakeWorkers int
	// HandshakeTimeout bounds a TLS handshake, from the connection's
	// arrival (or a dial's connect) to its end, the waits for the peer and
	// for a slot (HandshakeWorkers) included; past it the connection
	// closes with ErrHandshakeTimeout and its goroutine, if it has one,
	// ends. Default 10 s.
	HandshakeTimeout time.Duration
	// ErrorLog receives the panics the engine recovers, each with its
	// stack, as http.Server.ErrorLog does. Default: the log package's
	// standard logger.
	ErrorLog *log.Logger
	// CrashOnPanic lets a callback's panic go on and crash the program,
	// as any unrecovered panic does, where by default, as in net/http, it
	// ends only its connection: a panic in a connection's callback
	// (OnOpen, OnData, OnEOF, OnDeadline, OnLimit, OnDrain, a function
	// given to Execute) is recovered, logged to ErrorLog with its stack,
	// and the connection is reset (a UDP socket's OnData loses its
	// datagram only); OnClose gets a *PanicError. A panic
	// in OnClose is logged; in OnBoot it is logged and shuts the engine
	// down (Options.ShutdownTimeout); in OnTick it is logged and stops
	// the ticks; in OnShutdown it is logged. A panic in a tls.Config
	// callback fails that handshake. Set it for a program that would
	// rather stop, with the panic's full report, than serve on.
	CrashOnPanic bool
	// Pool, if not nil, runs the callbacks of every connection (OnOpen,
	// OnData, OnEOF, OnDeadline, OnLimit, OnDrain, OnClose) on the pool's
	// goroutines instead of the loop, in order per connection and never
	// two at once for one connection, so a callback may block without
	// stalling its loop: see Pool and the package documentation's
	// "Callbacks on a pool". OnBoot, OnTick, OnShutdown, Execute's
	// functions and a UDP socket's callbacks stay on the loops.
	Pool *Pool

	clock loop.Clock  // tests: manual clock
	open  loop.Opener // tests: fault injection
}

// defaultKeepAlive is the keep-alive period accepted TCP connections get
// when Options.TCPKeepAlive is 0: package net's (defaultTCPKeepAliveIdle
// and defaultTCPKeepAliveInterval in net/dial.go).
const defaultKeepAlive = 15 * time.Second

// defaultLinger is Options.CloseLinger's default: net/http's
// rstAvoidanceDelay (net/http/server.go), about a round trip around the
// planet.
const defaultLinger = 500 * time.Millisecond

// lingerMax is the most a closing connection reads and drops (see
// Conn.dropInput) before it stops reading: the linger costs its loop no
// more than that, whatever the peer sends.
const lingerMax = 256 << 10

// idling reports whether connections have an idle timeout.
func (o *Options) idling() bool { return o.IdleTimeout > 0 || o.ReadIdleTimeout > 0 }

// idleBound is the shorter idle timeout that is set: the first check of
// a new connection's, and how long its closing output may stall.
func (o *Options) idleBound() time.Duration {
	switch {
	case o.IdleTimeout <= 0:
		return o.ReadIdleTimeout
	case o.ReadIdleTimeout <= 0:
		return o.IdleTimeout
	}
	return min(o.IdleTimeout, o.ReadIdleTimeout)
}

// setDefaults fills in the defaults, and reports options that contradict
// each other.
func (o *Options) setDefaults() error {
	if o.MaxWriteBuffer > 0 && o.WriteHighWater > o.MaxWriteBuffer {
		return fmt.Errorf("engine: WriteHighWater %d exceeds MaxWriteBuffer %d: reading would never pause before writes fail",
			o.WriteHighWater, o.MaxWriteBuffer)
	}
	if o.WriteHighWater > 0 && o.WriteLowWater > o.WriteHighWater {
		return fmt.Errorf("engine: WriteLowWater %d exceeds WriteHighWater %d", o.WriteLowWater, o.WriteHighWater)
	}
	if o.Loops <= 0 {
		o.Loops = runtime.GOMAXPROCS(0)
	}
	if o.ReadBufferSize <= 0 {
		o.ReadBufferSize = 64 << 10
	}
	if o.MaxInputBuffer <= 0 {
		o.MaxInputBuffer = 4 << 20
	}
	if o.WriteHighWater <= 0 {
		o.WriteHighWater = 64 << 10
		if o.MaxWriteBuffer > 0 {
			o.WriteHighWater = min(o.WriteHighWater, max(o.MaxWriteBuffer/2, 1))
		}
	}
	if o.WriteLowWater <= 0 || o.WriteLowWater > o.WriteHighWater {
		o.WriteLowWater = o.WriteHighWater / 4
	}
	if o.MaxWriteBuffer <= 0 {
		o.MaxWriteBuffer = max(16<<20, o.WriteHighWater)
	}
	if o.HandshakeWorkers <= 0 {
		o.HandshakeWorkers = max(16, 4*runtime.GOMAXPROCS(0))
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.CloseLinger == 0 {
		o.CloseLinger = defaultLinger
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	return nil
}
