//go:build darwin || dragonfly || freebsd

package poller

import (
	"os"

	"golang.org/x/sys/unix"
)

// kqWaker wakes a kqueue with an EVFILT_USER event, which these systems
// have: no descriptor of its own.
type kqWaker struct{}

const wakeIdent = 0 // EVFILT_USER identifier of the wake-up event

func (kqWaker) init(kq int) error {
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR}}
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		return os.NewSyscallError("kevent", err)
	}
	return nil
}

// is reports whether e is the wake-up event.
func (kqWaker) is(e *unix.Kevent_t) bool { return e.Filter == unix.EVFILT_USER }

// trigger raises the event on kq; safe from any goroutine while kq is
// open.
func (kqWaker) trigger(kq int) error {
	ev := []unix.Kevent_t{{Ident: wakeIdent, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}}
	_, err := unix.Kevent(kq, ev, nil, nil)
	return err
}

func (kqWaker) close() {}
