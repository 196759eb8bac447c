//go:build netbsd || openbsd

package poller

import (
	"os"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// kqWaker wakes a kqueue through a non-blocking pipe: x/sys/unix gives
// these systems no EVFILT_USER. The read end is registered for reading;
// a wake-up writes a byte to the other. The event is edge-triggered, so
// the loop drains the pipe each time it sees it: a full pipe would
// otherwise never signal again.
type kqWaker struct {
	r int
	w sock.FD // written by trigger on any goroutine, closed once none is
}

func (k *kqWaker) init(kq int) error {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_NONBLOCK|unix.O_CLOEXEC); err != nil {
		return os.NewSyscallError("pipe2", err)
	}
	ev := make([]unix.Kevent_t, 1)
	unix.SetKevent(&ev[0], p[0], unix.EVFILT_READ, unix.EV_ADD|unix.EV_CLEAR)
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		unix.Close(p[0])
		unix.Close(p[1])
		return os.NewSyscallError("kevent", err)
	}
	k.r = p[0]
	k.w.Init(p[1])
	return nil
}

// is reports whether e is the wake-up event, and drains the pipe if so.
func (k *kqWaker) is(e *unix.Kevent_t) bool {
	if int(e.Ident) != k.r || e.Filter != unix.EVFILT_READ {
		return false
	}
	var buf [64]byte
	for {
		if n, err := unix.Read(k.r, buf[:]); n <= 0 || err != nil {
			return true
		}
	}
}

// trigger writes a byte to the pipe; safe from any goroutine. A full
// pipe already holds a pending wake-up.
func (k *kqWaker) trigger(int) error {
	fd, ok := k.w.Acquire()
	if !ok {
		return nil
	}
	defer k.w.Release()
	if _, err := unix.Write(fd, []byte{1}); err != nil && err != unix.EAGAIN {
		return os.NewSyscallError("write", err)
	}
	return nil
}

func (k *kqWaker) close() {
	k.w.Close()
	unix.Close(k.r)
}
