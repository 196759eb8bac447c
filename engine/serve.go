package engine

import "github.com/galeio/gale/internal/loop"

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
	if h.c.lp.l.Post(loop.Func(h.c.attach)) != nil {
		h.c.discard()
		return ErrEngineStopped
	}
	return nil
}

// discard closes a held connection that will never be served; a held
// listener is closed with the others (beginStop).
func (h held) discard() {
	if h.c != nil {
		h.c.discard()
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
