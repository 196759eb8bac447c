package engine

import (
	"sync"

	"github.com/galeio/gale/internal/loop"
)

// held is what the engine was given to serve before OnBoot returned: a
// listener to start or a connection to attach. Connections are served
// from Start on, once OnBoot has set up what they need.
type held struct {
	ln *listener
	c  *Conn
}

// serve starts h's listener or attaches h's connection: now once the
// engine has booted, when it boots otherwise. It fails with
// ErrEngineStopped once the engine is stopping; the connection is then
// discarded.
func (e *Engine) serve(h held) error {
	e.mu.Lock()
	switch {
	case e.state >= stateStopping:
		e.mu.Unlock()
		h.discard()
		return ErrEngineStopped
	case !e.booted:
		if h.c != nil {
			h.c.coldOf().early = new(earlyTasks) // h.c is not shared yet
		}
		e.held = append(e.held, h)
		e.mu.Unlock()
		return nil
	}
	e.mu.Unlock()
	return h.run()
}

// release serves what was held. It runs once, when OnBoot has returned.
func (e *Engine) release() {
	e.mu.Lock()
	e.booted = true
	hs := e.held
	e.held = nil
	e.mu.Unlock()
	for _, h := range hs {
		h.run()
	}
}

// dropHeld discards what was never served: the engine stopped before it
// booted.
func (e *Engine) dropHeld() {
	e.mu.Lock()
	hs := e.held
	e.held = nil
	e.mu.Unlock()
	for _, h := range hs {
		h.discard()
	}
}

func (h held) run() error {
	if h.ln != nil {
		return h.ln.lp.l.Post(loop.Func(h.ln.start))
	}
	q := h.c.earlyOf()
	if q != nil {
		q.mu.Lock()
		defer q.mu.Unlock()
	}
	if h.c.lp.l.Post(loop.Func(h.c.attach)) != nil {
		h.c.discard()
		q.end(nil)
		return ErrEngineStopped
	}
	q.end(h.c.lp.l)
	return nil
}

// discard closes a held connection that will never be served; a held
// listener is closed with the others (beginStop).
func (h held) discard() {
	if h.c != nil {
		h.c.discard()
		if q := h.c.earlyOf(); q != nil {
			q.mu.Lock()
			q.end(nil)
			q.mu.Unlock()
		}
	}
}

// discard closes c, which never reached its loop: its Writes fail from
// now on.
func (c *Conn) discard() {
	c.mu.Lock()
	c.mbits.set(bDead, true)
	c.mu.Unlock()
	c.fd.Close()
	c.lp.unassign()
}

// earlyTasks are the tasks of a held connection, posted before its attach
// (a Close, an Abort, a flush or a deadline of a connection adopted before
// Start): they wait here and follow the attach to the loop, in order, so
// none runs on a connection its loop has not attached. Without this a
// Close given before Start ran first, and OnClose came before OnOpen.
type earlyTasks struct {
	mu    sync.Mutex
	tasks []loop.Task
	state uint8 // earlyHolding, then earlyPosted or earlyDropped
}

const (
	earlyHolding uint8 = iota // the attach is not posted: tasks wait
	earlyPosted               // it is: tasks go to the loop
	earlyDropped              // the connection was discarded: tasks fail
)

// earlyOf returns c's early tasks, nil unless c was held. Safe from any
// goroutine: they are set before c is shared.
func (c *Conn) earlyOf() *earlyTasks {
	if k := c.cold.Load(); k != nil {
		return k.early
	}
	return nil
}

// hold keeps t if the attach is not posted yet, and reports whether it
// did (done) and, if so, the error the post returns.
func (q *earlyTasks) hold(t loop.Task) (done bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch q.state {
	case earlyHolding:
		q.tasks = append(q.tasks, t)
		return true, nil
	case earlyDropped:
		return true, ErrEngineStopped
	}
	return false, nil
}

// end posts the tasks held to l, after the attach, or drops them if l is
// nil; later tasks then go to the loop, or fail. A task the stopping loop
// refuses is dropped with the connection. q.mu is held.
func (q *earlyTasks) end(l *loop.Loop) {
	if q == nil {
		return
	}
	q.state = earlyDropped
	if l != nil {
		q.state = earlyPosted
		for _, t := range q.tasks {
			l.Post(t)
		}
	}
	q.tasks = nil
}
