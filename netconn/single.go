package netconn

import (
	"sync/atomic"
	"time"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// single is a descriptor served by one loop operation at a time, with a
// deadline and a Close that waits for the loop: a Listener's accept, a
// PacketConn's receive. Its owner embeds it.
type single struct {
	fd       sock.FD
	lp       *nloop
	op       loop.Op      // the operation: OpAccept or OpRecvFrom
	deadline atomic.Int64 // of op; unix nanoseconds, 0 none
	closed   atomic.Bool
	gone     chan struct{} // closed once the loop let go of fd

	// Owned by the loop goroutine.
	tag      loop.Tag
	attached bool
	active   bool // op is in flight
	closing  bool
	timer    loop.Timer
}

func (s *single) init(fd int, lp *nloop, op loop.Op) {
	s.fd.Init(fd)
	s.lp, s.op, s.gone = lp, op, make(chan struct{})
	s.timer.Fire = s.fire
}

// begin attaches fd for o if need be and marks op in flight; the caller
// submits it, then calls retime. Loop goroutine only.
func (s *single) begin(l *loop.Loop, o loop.Owner, stream bool) error {
	if !s.attached {
		tag, err := l.Attach(s.fd.Sysfd(), stream, o)
		if err != nil {
			return err
		}
		s.tag, s.attached = tag, true
	}
	s.active = true
	return nil
}

// ended records that op completed. Loop goroutine only.
func (s *single) ended(l *loop.Loop) {
	s.lp.woke = true
	s.active = false
	l.Unschedule(&s.timer)
}

// retime sets the timer for the deadline of op in flight, or cancels op
// when the deadline has passed. Loop goroutine only.
func (s *single) retime(l *loop.Loop) {
	if !s.active {
		return
	}
	switch d := s.deadline.Load(); {
	case d == 0:
		l.Unschedule(&s.timer)
	case passed(d):
		l.Unschedule(&s.timer)
		l.Cancel(s.tag, s.op)
	default:
		l.Schedule(&s.timer, time.Unix(0, d))
	}
}

func (s *single) fire(time.Time) { s.retime(s.lp.l) }

// setDeadline applies a new deadline, to op in flight too.
func (s *single) setDeadline(t time.Time) {
	s.deadline.Store(nanos(t))
	s.lp.l.Post((*singleRetime)(s))
}

type singleRetime single

func (t *singleRetime) Run(l *loop.Loop) { (*single)(t).retime(l) }

// shut has the loop cancel op and close fd, and waits for it; it reports
// false when s was closed already.
func (s *single) shut() bool {
	if !s.closed.CompareAndSwap(false, true) {
		return false
	}
	if s.lp.l.Post((*singleClose)(s)) != nil {
		s.fd.Close() // the loop is gone: nothing of s's is in flight
		close(s.gone)
	}
	<-s.gone
	return true
}

type singleClose single

func (t *singleClose) Run(l *loop.Loop) {
	s := (*single)(t)
	s.closing = true
	if s.active {
		l.Cancel(s.tag, s.op)
	}
	s.settle(l)
}

// settle completes a Close once op is no longer in flight. Loop goroutine
// only.
func (s *single) settle(l *loop.Loop) {
	if !s.closing || s.active {
		return
	}
	if s.attached {
		l.Release(s.tag)
		s.attached = false
	}
	s.fd.Close()
	s.closing = false
	close(s.gone)
}
