package engine

import (
	"context"

	"github.com/galeio/gale/internal/loop"
)

// Shutdown stops the engine gracefully: it closes the listeners, so no new
// connection is accepted, closes every connection as Conn.Close does
// (after a word from the handler, if it is a Drainer): its queued output
// written, its sending side shut down, then a linger for its peer's end
// (Options.CloseLinger), and waits for them until ctx ends. Connections
// still writing their output then are closed at once, dropping it
// (OnClose gets ErrEngineStopped); those still lingering close as their
// linger's end would close them. No loop goroutine survives it.
//
// Shutdown returns nil when every connection closed without losing
// output: all of it written, and no reset. Otherwise it returns a
// *ShutdownError, which counts the connections closed with output lost:
// output dropped (cut short when ctx ended, a write that failed, a peer
// that reset, Abort, MaxWriteBuffer), or a close with the peer's bytes
// unread (a peer that went on sending past the linger), which the kernel
// turns into a reset, while output was still in flight. Its
// Err is ctx's error if ctx ended first, so errors.Is(err,
// context.DeadlineExceeded) tells a deadline. It returns ErrEngineStopped
// if the engine was already stopping.
//
// Called from a callback, Shutdown cannot wait for the loop it runs on: it
// starts the shutdown and returns nil at once.
func (e *Engine) Shutdown(ctx context.Context) error {
	if e.onLoop() || e.onPool() {
		go e.Shutdown(ctx)
		return nil
	}
	idle, ok := e.beginStop()
	if !ok {
		<-e.done
		return ErrEngineStopped
	}
	for _, lp := range e.loops {
		lp.l.Post(loop.Func(func(*loop.Loop) {
			lp.draining = true
			lp.eachConn((*Conn).drain)
		}))
	}
	var err error
	if e.conns.Load() > 0 {
		select {
		case <-idle:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	e.stopLoops()
	if lost := e.lost.Load(); lost > 0 {
		return &ShutdownError{Lost: int(lost), Err: err}
	}
	return nil
}

// Stop closes every connection at once (OnClose gets ErrEngineStopped),
// stops the loops and runs OnShutdown. It returns ErrEngineStopped if the
// engine was already stopping. Called from a callback, it starts the stop
// and returns nil at once: it cannot wait for its own loop.
func (e *Engine) Stop() error {
	if e.onLoop() || e.onPool() {
		go e.Stop()
		return nil
	}
	if _, ok := e.beginStop(); !ok {
		<-e.done
		return ErrEngineStopped
	}
	e.stopLoops()
	return nil
}

// Done is closed once the engine has stopped.
func (e *Engine) Done() <-chan struct{} { return e.done }

// Err returns the error that stopped the engine when one of its event
// loops failed (its backend returned an error it cannot go on from), and
// nil otherwise: nil while it runs and after Stop or Shutdown.
func (e *Engine) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// beginStop moves the engine to stopping and closes its listeners. ok is
// false if it was stopping already.
func (e *Engine) beginStop() (idle chan struct{}, ok bool) {
	e.mu.Lock()
	if e.state >= stateStopping {
		e.mu.Unlock()
		return nil, false
	}
	e.state = stateStopping
	e.idle = make(chan struct{})
	idle = e.idle
	lns := e.listeners
	e.listeners = nil
	e.mu.Unlock()
	for _, ln := range lns {
		ln.close()
	}
	return idle, true
}

// stopLoops closes what is left and ends the loops.
func (e *Engine) stopLoops() {
	e.dropHeld()
	for _, lp := range e.loops {
		lp.l.Stop(func(*loop.Loop) {
			lp.eachConn(func(c *Conn) {
				if c.lbits.has(bLinger) {
					c.finish() // its output is written: as its linger's end would
					return
				}
				c.fail(ErrEngineStopped)
			})
		})
	}
	e.hs.wait()     // every connection closed: no handshake waits for input
	e.pooled.Wait() // the OnClose of every pooled connection ran
	e.mu.Lock()
	e.state = stateStopped
	e.mu.Unlock()
	e.callShutdown()
	close(e.done)
}

// shutdownAsync starts a graceful shutdown from a callback, which must not
// wait for the loops, bounded by Options.ShutdownTimeout.
func (e *Engine) shutdownAsync() {
	go func() {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if d := e.opts.ShutdownTimeout; d > 0 {
			ctx, cancel = context.WithTimeout(ctx, d)
		}
		defer cancel()
		e.Shutdown(ctx)
	}()
}

// onPool reports whether the caller is a worker of Options.Pool, whose
// callbacks Stop waits for.
func (e *Engine) onPool() bool {
	return e.opts.Pool != nil && e.opts.Pool.wp.OnWorker()
}

// onLoop reports whether the caller runs on one of the engine's loops.
func (e *Engine) onLoop() bool {
	for _, lp := range e.loops {
		if lp.l.OnLoop() {
			return true
		}
	}
	return false
}
