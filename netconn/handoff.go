package netconn

import (
	"net"

	"github.com/galeio/gale/internal/loop"
)

// takeBuffered stops the loop receiving for c, waits until a receive in
// flight ended, and returns the bytes received ahead of Read (those of
// that receive included), in order; later Reads find none and the
// connection reads nothing more from its socket. It is the first step of
// a hand-over: the descriptor, with what the kernel still holds, goes to
// a new owner, and the returned bytes go before them.
func (c *Conn) takeBuffered() ([]byte, error) {
	r := &c.rd
	r.serial.Lock()
	defer r.serial.Unlock()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, c.opError("detach", net.ErrClosed)
	}
	r.held = true
	r.mu.Unlock()
	done := make(chan struct{})
	if c.post(&holdTask{c: c, done: done}) != nil {
		close(done)
	}
	<-done
	r.mu.Lock()
	defer r.mu.Unlock()
	var b []byte
	if r.stash != nil {
		b = append([]byte(nil), (*r.stash)[r.off:]...)
		*r.stash = (*r.stash)[:0]
		stashes.Put(r.stash)
		r.stash, r.off = nil, 0
	}
	return b, nil
}

// holdTask cancels c's receive in flight and closes done once it ended.
// With none in flight (the stash full) a backend that reads ahead
// (loop.ReadsAhead: io_uring's multishot receive goes on between
// receives) may still hold bytes it took from the socket: a receive
// submitted and cancelled at once brings them, and stops that. (epoll
// takes nothing ahead: the socket keeps it.)
type holdTask struct {
	c    *Conn
	done chan struct{}
}

func (t *holdTask) Run(l *loop.Loop) {
	c, r := t.c, &t.c.rd
	if !r.armed {
		r.mu.Lock()
		ended := r.err != nil // the backend gave all it had before the end
		r.mu.Unlock()
		if !c.attached || c.closing || ended || !l.Traits().Has(loop.ReadsAhead) {
			close(t.done)
			return
		}
		r.armed = true
		l.Recv(c.tag, nil)
	}
	r.hold = t.done
	l.Cancel(c.tag, loop.OpRecv)
}

// resumeReading undoes takeBuffered's hold: the loop receives again if
// Reads had started it.
func (c *Conn) resumeReading() {
	r := &c.rd
	r.mu.Lock()
	r.held = false
	again := r.started && r.err == nil && !r.closed
	r.mu.Unlock()
	if again {
		c.post((*readTask)(r))
	}
}
