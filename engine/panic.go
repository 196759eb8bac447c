package engine

import (
	"fmt"
	"log"
	"net"
	"runtime/debug"
	"time"
)

// Panics in callbacks. A callback that panics is the bug of one
// connection's handler, and net/http's answer is the reference: the
// panic is recovered, logged with its stack, and ends that connection
// only (net/http/server.go, conn.serve), so that every other connection
// of the loop goes on being served. Options.CrashOnPanic opts out.
//
// Each callback is called through one of the small functions below,
// which defers contain: an open-coded defer, a few nanoseconds a call
// (docs/bench/panics.md). contain does not touch the connection: the
// callback stopped half-way, and its caller, whose bookkeeping (the
// Inbound, batching, lp.cur) must be done first, closes it once it has
// the panicked action (act).

// A PanicError is OnClose's error for a connection closed because one of
// its callbacks panicked (see Options.CrashOnPanic); a TLS handshake that
// panicked (in a tls.Config callback) fails with a *net.OpError around
// one. Value is what was passed to panic, Stack the stack of the
// panicking goroutine as runtime/debug.Stack formats it.
type PanicError struct {
	Value any
	Stack []byte
	in    string // the callback, for Error
}

func (e *PanicError) Error() string {
	if e.in == "" {
		return fmt.Sprintf("engine: panic: %v", e.Value)
	}
	return fmt.Sprintf("engine: panic in %s: %v", e.in, e.Value)
}

// Unwrap returns Value if it is an error, so that errors.Is and errors.As
// see what the callback panicked with.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// panicked is the Action the callers below return for a callback that
// panicked: act then resets the connection with lp.panicErr.
const panicked Action = -1

// contain recovers the panic of the callback named cb of c, unless
// Options.CrashOnPanic is set, logs it and sets *act to panicked, with
// the error in lp.panicErr. It must be deferred directly, so that its
// recover stops the panic. A panic of OnClose (c closed) is only logged.
func (lp *eloop) contain(c *Conn, cb string, act *Action) {
	if lp.e.opts.CrashOnPanic {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	err := &PanicError{Value: v, Stack: debug.Stack(), in: cb}
	var peer net.Addr = c.RemoteAddr()
	if c.kind.has(kUDP) && lp.in.from != nil {
		peer = lp.in.from // a datagram's source
	}
	lp.e.logf("engine: panic in %s serving %v: %v\n%s", cb, peer, v, err.Stack)
	if !c.lbits.has(bClosed) {
		lp.panicErr = err
		*act = panicked
	}
}

// Recover is for a package that runs its own users' code within c's
// callbacks (package websocket runs OnMessage within OnData) and ends a
// connection its own way when that code panics (a WebSocket close frame
// first). Deferred directly by such a callback, it recovers a panic as
// the engine would, logs it to Options.ErrorLog with its stack, and
// calls then, if not nil, with it; the callback then returns as if it
// had ended, with its named results as they were, or as then set them.
// With Options.CrashOnPanic, or with no panic, it does nothing. It may
// be deferred on any goroutine.
func (c *Conn) Recover(then func(*PanicError)) {
	if c.lp.e.opts.CrashOnPanic {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	err := &PanicError{Value: v, Stack: debug.Stack()}
	c.lp.e.logf("engine: panic serving %v: %v\n%s", c.RemoteAddr(), v, err.Stack)
	if then != nil {
		then(err)
	}
}

// resetPanicked closes c, whose callback panicked: at once, with a reset,
// since its output may stop in the middle of a message.
func (c *Conn) resetPanicked() {
	err := c.lp.panicErr
	c.lp.panicErr = nil
	c.lbits.set(bReset, true)
	c.fail(err)
}

// logf writes to Options.ErrorLog, or else to the log package's
// standard logger.
func (e *Engine) logf(format string, args ...any) {
	if l := e.opts.ErrorLog; l != nil {
		l.Printf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// containEngine recovers the panic of the engine-wide callback cb
// (OnBoot, OnTick, OnShutdown), unless Options.CrashOnPanic is set, logs
// it, and sets *act to Shutdown when stop is set.
func (e *Engine) containEngine(cb string, act *Action, stop bool) {
	if e.opts.CrashOnPanic {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	e.logf("engine: panic in %s: %v\n%s", cb, v, debug.Stack())
	if stop {
		*act = Shutdown
	}
}

// containHandshake recovers the panic of c's TLS handshake, unless
// Options.CrashOnPanic is set, logs it and sets *err to a *PanicError.
// Handshake goroutine.
func (e *Engine) containHandshake(c *Conn, err *error) {
	if e.opts.CrashOnPanic {
		return
	}
	v := recover()
	if v == nil {
		return
	}
	pe := &PanicError{Value: v, Stack: debug.Stack(), in: "TLS handshake"}
	e.logf("engine: panic in TLS handshake with %v: %v\n%s", c.RemoteAddr(), v, pe.Stack)
	*err = pe
}

func (c *Conn) callOpen() (out []byte, act Action) {
	defer c.lp.contain(c, "OnOpen", &act)
	return c.lp.e.handler.OnOpen(c)
}

func (c *Conn) callData(in *Inbound) (act Action) {
	defer c.lp.contain(c, "OnData", &act)
	return c.lp.e.handler.OnData(c, in)
}

func (c *Conn) callEOF(hc HalfCloser) (act Action) {
	defer c.lp.contain(c, "OnEOF", &act)
	return hc.OnEOF(c)
}

func (c *Conn) callDeadline(err error) (act Action) {
	defer c.lp.contain(c, "OnDeadline", &act)
	return c.lp.e.handler.OnDeadline(c, err)
}

func (c *Conn) callLimit(lh LimitHandler, err error) (act Action) {
	defer c.lp.contain(c, "OnLimit", &act)
	lh.OnLimit(c, err)
	return None
}

func (c *Conn) callDrain(d Drainer) (act Action) {
	defer c.lp.contain(c, "OnDrain", &act)
	d.OnDrain(c)
	return None
}

func (c *Conn) callFunc(f func(*Conn)) (act Action) {
	defer c.lp.contain(c, "an Execute function", &act)
	f(c)
	return None
}

// callClose runs OnClose; c is closed, so a panic is only logged.
func (c *Conn) callClose(err error) {
	if pc := c.poolOf(); pc != nil {
		pc.push(pevent{kind: pevClose, err: err}) // after every event queued before
		return
	}
	var act Action
	defer c.lp.contain(c, "OnClose", &act)
	c.lp.e.handler.OnClose(c, err)
}

// callBoot runs OnBoot; one that panicked shuts the engine down, as
// its Shutdown action would: the handler was not set up.
func (e *Engine) callBoot() (act Action) {
	defer e.containEngine("OnBoot", &act, true)
	return e.handler.OnBoot(e)
}

// callTick runs OnTick; one that panicked asks for no more ticks.
func (e *Engine) callTick() (d time.Duration, act Action) {
	defer e.containEngine("OnTick", &act, false)
	return e.handler.OnTick()
}

func (e *Engine) callShutdown() {
	var act Action
	defer e.containEngine("OnShutdown", &act, false)
	e.handler.OnShutdown(e)
}
